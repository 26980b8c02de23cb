module example.com/app

go 1.19

require (
	example.com/peer v0.0.0
	redletter/instrument v0.0.0
)

replace (
	example.com/peer => ../peer
	redletter/instrument => ../../../go
)
