"""GitHub at the edge: the pull-request sticky comment, the job summary, step outputs and annotations.

event.py     who we are in Actions: repository, pull request, base branch (GITHUB_* variables)
rest.py      a small httpx client for the GitHub REST API (GITHUB_TOKEN, GITHUB_API_URL), typed errors
comments.py  pure: fit a Markdown body into GitHub's comment limit without breaking fences or <details>
sticky.py    the one comment per pull request, found again by a hidden marker and updated in place
actions.py   GITHUB_STEP_SUMMARY, GITHUB_OUTPUT and workflow-command annotations
publish.py   `plan --github-comment`: all of the above for one plan, or for a validation failure
"""
