"""The `.pto` text format: lexer, parser and typed AST."""
