"""axe-core in Chromium under the pages' own Content-Security-Policy, in every state a visitor sees.

The pages allow no inline or evaluated script, so axe-core cannot be added to a page as a ``<script>`` (that
needs the CSP bypassed, and then the page is not the one a visitor gets). Instead its source is given to the
browser as an init script (``BrowserContext.add_init_script``: the DevTools protocol runs it in each new
document before the page's own scripts, as the browser runs an extension's, outside the page's CSP), and
the checks are started the same way. :func:`csp_in_force` shows in each test that the CSP still holds: the
page was served with it, and a script the page itself adds inline is refused and reported.

Each page is checked at WCAG 2.1 A and AA and axe's best practices (headings, landmarks), and every
violation fails, whatever its impact:

- as it is shown (:func:`violations`, the whole document);
- with the pointer over each kind of control, an option of the decision first (:func:`hovered`);
- with the keyboard's focus on each control Tab reaches (:func:`focused`).

axe-core comes from the npm registry (``.ci/run`` installs it into ``.ci/.tools``, as it does buf; or set
``KUTNAHORA_AXE`` to its ``axe.min.js``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kutnahora.web.headers import SECURITY_HEADERS
from tests.web.conftest import ROOT

AXE = Path(os.environ.get("KUTNAHORA_AXE") or ROOT / ".ci/.tools/node_modules/axe-core/axe.min.js")
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
OPTIONS = json.dumps({"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]})

# Notes every Content-Security-Policy violation the page meets, from before its first script runs.
CSP_LISTENER = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const what = event.blockedURI || "inline";
  window.__cspViolations.push(`${event.violatedDirective}: ${what} (${event.sample})`);
});
"""

# What a keyboard or pointer can act on; each kind is checked in its hovered and focused states.
CONTROLS = (
    "a[href], button:not([disabled]), select:not([disabled]), input:not([disabled]), summary, "
    "[tabindex]:not([tabindex='-1'])"
)
PER_KIND = 2  # controls of one kind (tag, classes, role, state) checked in each state


def need_axe() -> None:
    if not AXE.is_file():
        pytest.skip(
            f"axe-core is not installed at {AXE} (npm install --prefix .ci/.tools axe-core; .ci/run does)"
        )


def install(context: Any) -> None:
    """Give every page of ``context`` axe-core and the CSP listener, before the page's own scripts."""
    need_axe()
    context.add_init_script(script=CSP_LISTENER)
    context.add_init_script(path=str(AXE))


def csp_in_force(page: Any, response: Any) -> None:
    """The page came with the site's CSP, and it is enforced: an inline script the page adds is refused."""
    assert response.headers.get("content-security-policy") == SECURITY_HEADERS["content-security-policy"]
    ran = page.evaluate(
        """() => new Promise((done) => {
             const script = document.createElement("script");
             script.textContent = "window.__inlineRan = true";
             document.head.append(script);
             setTimeout(() => done(window.__inlineRan === true), 100);
           })"""
    )
    assert ran is False, "an inline script ran: the page's Content-Security-Policy is not in force"
    refused = page.evaluate("window.__cspViolations")
    assert any(line.startswith("script-src") for line in refused), refused
    page.evaluate("window.__cspViolations = []")


def csp_violations(page: Any) -> list[str]:
    """What the CSP refused the page (its own scripts, styles and requests) since the last check."""
    found: list[str] = page.evaluate("window.__cspViolations")
    return found


def _lines(found: list[dict[str, Any]], state: str) -> list[str]:
    return [
        f"{state}: {v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(
            f"{node['target']} {node.get('failureSummary', '').splitlines()[-1:]}" for node in v["nodes"][:3]
        )
        for v in found
    ]


def violations(page: Any, state: str = "as shown") -> list[str]:
    """The axe-core violations of the whole document as it is shown now, one line each."""
    found = page.evaluate(f"axe.run(document, {OPTIONS}).then((r) => r.violations)")
    return _lines(found, state)


# The kind of a control: its tag, classes, role and state; PER_KIND of each kind are checked.
_KIND = """(e) => [e.tagName.toLowerCase(), ...[...e.classList].sort(), e.getAttribute("role") || "",
  e.getAttribute("aria-selected") || "", e.getAttribute("aria-current") || ""].join(".")"""

# The controls to hover, as {element, kind}: those shown on screen, PER_KIND of each kind at most, the
# matches of the first selector before the others.
_SAMPLE = f"""([first, controls, most]) => {{
  const kind = {_KIND};
  const seen = new Map();
  const chosen = [];
  const firsts = first ? [...document.querySelectorAll(first)] : [];
  const rest = controls ? [...document.querySelectorAll(controls)].filter((e) => !firsts.includes(e)) : [];
  for (const element of [...firsts, ...rest]) {{
    const box = element.getBoundingClientRect();
    if (!box.width || !box.height || !element.checkVisibility({{ visibilityProperty: true }})) continue;
    const name = kind(element);
    seen.set(name, (seen.get(name) || 0) + 1);
    if (seen.get(name) <= most) chosen.push({{ element, kind: name }});
  }}
  return chosen;
}}"""

# After a Tab: null when nothing has the focus, "again" when the focus came round to a control seen
# before, "" for a kind checked PER_KIND times already (the focus then skips the rest of a run of such
# siblings), else the focused control's kind.
_FOCUS_STEP = f"""(most) => {{
  const element = document.activeElement;
  if (!element || element === document.body) return null;
  if (element.__axeFocused) return "again";
  element.__axeFocused = true;
  const name = ({_KIND})(element);
  const seen = (window.__axeKinds = window.__axeKinds || new Map());
  seen.set(name, (seen.get(name) || 0) + 1);
  if (seen.get(name) <= most) return name;
  // A run of siblings of a kind checked enough (the moves of a long game): Tab on from its last.
  let last = element;
  const same = (e) => e && ({_KIND})(e) === name;
  while (same(last.nextElementSibling)) last = last.nextElementSibling;
  if (last !== element) {{
    last.__axeFocused = true;
    last.focus();
  }}
  return "";
}}"""


def hovered(page: Any, first: str = "", others: bool = True) -> list[str]:
    """Violations with the pointer over each kind of control, ``first``'s matches before the others (only
    those unless ``others``): the whole document with the first control hovered, then each other hovered
    control by itself."""
    found: list[str] = []
    chosen = page.evaluate_handle(_SAMPLE, [first, CONTROLS if others else "", PER_KIND])
    kinds: list[str] = chosen.evaluate("(list) => list.map((c) => c.kind)")
    assert kinds, "no control to hover"
    for index, kind in enumerate(kinds):
        control = chosen.evaluate_handle("(list, i) => list[i].element", index).as_element()
        control.hover()
        name = f"pointer over {kind} {(control.text_content() or '')[:30]!r}"
        if index == 0:
            found += violations(page, name)
        else:
            found += _lines(control.evaluate(f"(e) => axe.run(e, {OPTIONS}).then((r) => r.violations)"), name)
    chosen.dispose()
    page.mouse.move(0, 0)
    return found


def focused(page: Any, most: int = 400) -> list[str]:
    """Violations with the keyboard's focus on each control Tab reaches (each kind up to :data:`PER_KIND`
    times), until the focus comes round again or after ``most`` presses."""
    found: list[str] = []
    page.mouse.move(0, 0)
    page.evaluate("document.activeElement && document.activeElement.blur(); window.__axeKinds = new Map()")
    checked = 0
    for _ in range(most):
        page.keyboard.press("Tab")
        kind = page.evaluate(_FOCUS_STEP, PER_KIND)
        if kind == "again":
            break
        if kind:
            checked += 1
            violated = page.evaluate(f"axe.run(document.activeElement, {OPTIONS}).then((r) => r.violations)")
            found += _lines(violated, f"focus on {kind}")
    assert checked, "Tab reached no control"
    return found


def every_state(page: Any, first: str = "") -> list[str]:
    """The violations of the page as shown, hovered and focused, and anything its CSP refused it."""
    return [
        *violations(page),
        *hovered(page, first),
        *focused(page),
        *(f"CSP refused: {line}" for line in csp_violations(page)),
    ]
