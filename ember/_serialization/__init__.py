"""The parts of ember.serialization: the globals a checkpoint names (_names), torch's zip
format (_zip) and the older formats ember.load still reads (_legacy)."""
