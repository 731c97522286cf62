"""`verdict`: every group measured at a named scale, then one page of findings computed from the records.

scale.py    what each scale runs (commands, options, rounds, expected seconds) and the time-left estimate
source.py   the one place records are read
findings.py each finding: one sentence from the records, its number, its uncertainty, its evidence
against.py  two machines side by side: the ratio per framework
page.py     the HTML page and the markdown text
cli.py      the click command: runs the groups in fresh processes, draws the progress, writes the page
"""
