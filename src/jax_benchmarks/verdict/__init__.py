"""`verdict`: every group measured at a named scale, then one page of findings computed from the records.

scale.py    what each scale runs (commands, options, rounds, expected seconds) and the time-left estimate
source.py   the one place records are read
findings.py each finding: one sentence from the records, its number, its uncertainty, its evidence; what a group
            declares for the verdict (`GroupFindings`, named on its entry in jax_benchmarks.groups)
decide.py   the four outcomes of a comparison at the margin (--margin), each with its interval
aa.py       the A/A guard `calibrate` runs: each figure's even rounds against its odd rounds, never "faster"
against.py  two machines side by side: the ratio per framework
page.py     the HTML page and the markdown text
cli.py      the click command: runs the groups' rounds (cli/rounds.py's one round loop), draws the progress,
            writes the page
calibrate.py the `calibrate` command: A/A rounds of chosen groups, judged by the gate and by aa.py
"""
