"""`netarena audit`: the grader-attack battery, cheating agents played against each app's grader.

Cheating agents (ordinary agents sending replies) play ordinary episodes of each app, and any cheat
judged correct, resolved or left unscored is reported.

cheats.py defines a cheat and its agent; generic.py holds the app-independent set (any app, also one
registered with register_app); k8s.py, route.py and malt.py the apps' own; battery.py runs them.
"""
