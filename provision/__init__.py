"""Set-up planning: what `./start.sh` installs and which model and window this machine gets.

Standard library only and importing no other project package, because it runs on plain
python3 before the virtual environment exists (`python3 -S -m provision`, which `./start.sh`
and `./start.sh plan` call). The runtime never needs it to serve; `models.footprint` and
`doctor` share its memory arithmetic so the plan and the running model are sized alike.
"""
