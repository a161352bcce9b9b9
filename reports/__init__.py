"""The scripts that produced the documentation's figures, tables and pictures from the shipped models, each run
as `python -m reports.NAME` from the project root (docs/command-line.md, "Reports")."""
