"""What the lessons compute with and measure: data, coref, models (torch), cost, measurements."""
