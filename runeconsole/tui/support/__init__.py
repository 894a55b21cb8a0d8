"""What every part of the console shares: the one worker policy, pacing, the theme, the
terminal's line filter, the base both consoles are built on, the palette, the spending
line."""
