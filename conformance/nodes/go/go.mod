module redletter/conformance/nodes/go

go 1.19
