"""How sure a reading is (contract 10: a guess is never a fact).

- `certain`: the words say it plainly; it changes data, prices a stay or runs a tool without a word;
- `likely`: one reading fits best (a hedged value, a range end that inherits the start's half of the
  day); it is said back with the reading used, or confirmed first where a recorded fact depends on it;
- `guess`: two readings fit, or the value is implausible; it is asked, never stored.
"""

CERTAIN, LIKELY, GUESS = "certain", "likely", "guess"
CERTAINTIES = (CERTAIN, LIKELY, GUESS)
