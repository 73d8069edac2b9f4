"""The formulas in numpy, read like the paper: attention, masks, multihead, flash; backends: torch."""
