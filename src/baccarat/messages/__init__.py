"""The contract with boards: every published message body and its JSON Schema. Pure."""
