module snapshot

go 1.21
