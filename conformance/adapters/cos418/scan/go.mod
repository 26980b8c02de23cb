module redletter.invalid/scan

go 1.21
