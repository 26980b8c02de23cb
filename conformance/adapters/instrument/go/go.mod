module redletter/instrument

go 1.19
