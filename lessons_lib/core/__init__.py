"""The formulas in numpy, read like the paper: attention, masks, multihead, flash; backends is the torch path."""
