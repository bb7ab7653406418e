module github.com/mcpres/mcpres/scripts/tools

go 1.26.0

tool (
	golang.org/x/exp/cmd/apidiff
	golang.org/x/exp/cmd/gorelease
)

require golang.org/x/mod v0.42.0

require (
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a // indirect
)
