module chandy_lamport

go 1.21
