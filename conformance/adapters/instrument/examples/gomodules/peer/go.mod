module example.com/peer

go 1.19

require redletter/instrument v0.0.0

replace redletter/instrument => ../../../go
