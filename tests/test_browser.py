"""The built pages, as a reader's browser shows them: build/article.html,
build/audit.html, build/robustness.html and the version matrix's
build/matrix.html in headless Chromium (Debian's chromium and
chromium-driver, driven by Selenium; nothing is downloaded at run time), at
a desktop width and a phone width.

The page as built, and the article rendered again by Quarto when `quarto`
is on PATH (its MathML and its scripts must stay offline too). On each page
and width: no console errors; nothing fetched from the network
(the pages are self-contained); no element wider than the viewport unless a
box that scrolls sideways holds it; every in-page link (and every link into
the sibling page) has its target; every image loads. On the article, every
bound number has its tooltip and its link to the provenance row.

Without Chromium these tests skip, saying why; REQUIRE_BROWSER=1 (set by
.ci/run, which installs it) turns that skip into a failure.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from articlekit.article.bound import bound_markdown
from articlekit.article.shortcodes import scan
from articlekit.core.jsonio import write_json
from articlekit.data.publishing import parse as parse_publishing
from articlekit.review import matrix as matrixlib
from tests.test_examples import built_example
from tests.workspace import merged_config
from tests.test_quarto import quarto_folder
from tests.fixture_bibliography import copy_article_files

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # slow: reads the built_project fixture's build

PAGES = ["article.html", "audit.html", "robustness.html"]
# Pages of this article only (its seed sweep): the second article has none.
OWN_PAGES = {"robustness.html"}
WIDTHS = {"desktop": 1280, "phone": 390}
HEIGHT = 900


def _find(*names):
    return next((path for name in names if (path := shutil.which(name))), None)


def _unavailable():
    """Why the browser cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -r requirements-dev.txt)"
    if not _find("chromium", "chromium-browser", "google-chrome"):
        return "no chromium on PATH (Debian: apt-get install chromium chromium-driver)"
    if not _find("chromedriver"):
        return "no chromedriver on PATH (Debian: apt-get install chromium-driver)"
    return None


@pytest.fixture(scope="session")
def browser():
    reason = _unavailable()
    if reason:
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1 but the browser tests cannot run: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _find("chromium", "chromium-browser", "google-chrome")
    for arg in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={WIDTHS['desktop']},{HEIGHT}",
    ]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # the driver given explicitly: Selenium Manager never downloads one
    driver = webdriver.Chrome(service=Service(executable_path=_find("chromedriver")), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def render_with_quarto(project, dest):
    """The built article rendered again by Quarto (when one is found), by
    the build's own render command, into dest/build beside a copy of the
    audit: Quarto's page must pass the same checks."""
    folder = quarto_folder()  # on PATH, else ../shared/quarto/bin, as tests/test_quarto.py finds it
    if folder is None:
        reason = "no Quarto (not on PATH, no ../shared/quarto/bin): the Quarto-rendered page is not checked here"
        if os.environ.get("REQUIRE_QUARTO"):
            pytest.fail(f"REQUIRE_QUARTO is set, but {reason}")
        pytest.skip(reason)
    (dest / "build").mkdir()
    shutil.copy(project / "build" / "audit.html", dest / "build" / "audit.html")
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "render",
            "article/index.qmd",
            "--bindings",
            "build/bindings.json",
            "--renderer",
            "quarto",
            "--html",
            str(dest / "build" / "article.html"),
            "--md",
            str(dest / "article.md"),
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"quarto render failed:\n{done.stderr[-3000:]}"
    assert "WARN" not in done.stderr, f"quarto warned:\n{done.stderr[-3000:]}"
    return dest / "build"


def build_example(tmp_path_factory):
    """The second article (examples/summation), built by its own snakemake:
    articlekit's pages must hold for any article, not only this one. A copy
    of the build tests/test_examples.py reads, made once in the run."""
    return built_example(tmp_path_factory) / "build"


def build_matrix_page(project, dest):
    """build/matrix.html as `snakemake matrix` writes it, from the built
    project's results (no environment is installed here): two environments
    that built and one that did not, whose card names its log (a path
    longer than a phone is wide)."""
    config = merged_config(project)
    publishing = parse_publishing(config["publishing"])
    shared = [project / "results" / f"{name}.json" for name in [*config["matrix"]["exclude"], "listings"]]
    results = [p for p in sorted((project / "results").glob("*.json")) if p not in shared]
    built = dest / "freeze.json"
    write_json(built, {"label": "here", "installed": True, "log": "logs/matrix/here/install.log"})
    columns = [
        matrixlib.column(
            label,
            ["numpy==2.4.6", "torch==2.13.0"],
            built,
            results,
            shared,
            project / "article" / "index.qmd",
            project / "baseline" / "published.yaml",
            publishing,
        )
        for label in ("numpy-2.4.6", "numpy-2.4.6-again")
    ]
    log = "logs/matrix/numpy-1.26.4-with-a-long-label/install.log"
    columns.append(
        {
            "label": "numpy-1.26.4-with-a-long-label",
            "pins": ["numpy==1.26.4", "torch==2.13.0"],
            "installed": False,
            "log": log,
            "versions": {},
            "shared": [],
            "bindings": None,
            "failed": [{"experiment": "(install)", "reason": "no such wheel", "log": log}],
        }
    )
    page = dest / "build" / "matrix.html"
    page.parent.mkdir()
    page.write_text(matrixlib.to_html(matrixlib.build(columns, publishing=publishing), publishing), encoding="utf-8")
    return page.parent


# The page as built, the article rendered again by Quarto (the audit page
# does not depend on the renderer: it is checked as built only), and the
# second article's pages. The matrix page is checked as made from the
# build (its own render, "matrix").
RENDERS = ["as-built", "quarto", "quarto-own", "example"]


def render_with_quartos_own_command(project, dest):
    """The built article as an author's `quarto render` in article/ gives it
    (the pre-render binds in-process, the page goes beside its text, article/index.html):
    the page an editor's Render button shows passes the same checks."""
    from tests.test_quarto import FAST

    folder = quarto_folder()
    if folder is None:
        reason = "no Quarto (not on PATH, no ../shared/quarto/bin): Quarto's own page is not checked here"
        if os.environ.get("REQUIRE_QUARTO"):
            pytest.fail(f"REQUIRE_QUARTO is set, but {reason}")
        pytest.skip(reason)
    work = dest / "project"
    shutil.copytree(project, work, symlinks=True)
    env = {
        **os.environ,
        "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
        "ARTICLEKIT_SNAKEMAKE_ARGS": " ".join([*FAST, "--config", "strict=false"]),
    }
    done = subprocess.run(
        ["quarto", "render", "index.qmd"], cwd=work / "article", env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"quarto render failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    page = work / "article" / "index.html"
    shutil.copy(page, page.parent / "article.html")
    return page.parent


@pytest.fixture(scope="module")
def build_dirs(built_project, tmp_path_factory):
    """build_dirs(render) -> the folder holding that render's pages, made
    on first use."""
    made = {}

    def build_dir(render):
        if render not in made:
            if render == "quarto":
                made[render] = render_with_quarto(built_project, tmp_path_factory.mktemp("quarto"))
            elif render == "quarto-own":
                made[render] = render_with_quartos_own_command(built_project, tmp_path_factory.mktemp("own"))
            elif render == "example":
                made[render] = build_example(tmp_path_factory)
            elif render == "matrix":
                made[render] = build_matrix_page(built_project, tmp_path_factory.mktemp("matrix"))
            else:
                made[render] = built_project / "build"
        return made[render]

    return build_dir


@pytest.fixture(params=RENDERS)
def build_dir(request, build_dirs):
    return build_dirs(request.param)


# The page each driver shows as open_page loaded it, untouched since:
# {id(driver): (address, width, the console messages of its load)}. A
# script that may change the page (axe's) forgets it.
_as_loaded = {}


def open_page(driver, path, width):
    """Load `path` in a viewport `width` px wide (a phone is emulated as a
    mobile device, so the page's viewport meta tag applies), wait for its
    images; -> the console messages logged while loading."""
    driver.get_log("browser")  # drop what earlier pages logged
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    address = Path(path).resolve().as_uri()
    driver.get(address)
    driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        Promise.all([...document.images].map(img => img.decode().catch(() => null))).then(() => done());
    """)
    log = driver.get_log("browser")
    _as_loaded[id(driver)] = (address, width, log)
    return log


def page_as_loaded(driver, path, width):
    """open_page's console messages for `path` at `width`, loading it only
    where the driver does not show it as it was loaded: the checks that
    only read a page (its layout, links, images, console, requests) share
    one load of it instead of loading it again each."""
    address = Path(path).resolve().as_uri()
    shown = _as_loaded.get(id(driver))
    if shown and shown[:2] == (address, width) and driver.current_url == address:
        return shown[2]
    return open_page(driver, path, width)


def forget_page(driver):
    """The page shown may have been changed by a script: the next check loads it again."""
    _as_loaded.pop(id(driver), None)


CASES = [
    (render, page, width)
    for render in RENDERS
    for page in PAGES
    for width in WIDTHS
    if (not render.startswith("quarto") or page == "article.html") and (render == "as-built" or page not in OWN_PAGES)
] + [("matrix", "matrix.html", width) for width in WIDTHS]


@pytest.fixture(scope="module", params=CASES, ids=["-".join(case) for case in CASES])
def case(request):
    """(render, page, width): module-scoped, so that pytest runs each
    case's checks one after another, whatever order the tests are in, and
    they share one load of the page (page_as_loaded)."""
    return request.param


@pytest.fixture
def loaded(case, browser, build_dirs):
    """(driver, path, the console messages of its load, width): the page
    loaded at that width, and touched since by no script that changes it."""
    render, page, width = case
    path = build_dirs(render) / page
    assert path.exists(), f"{path} was not built"
    log = page_as_loaded(browser, path, WIDTHS[width])
    return browser, path, log, WIDTHS[width]


def test_no_console_errors(loaded):
    _, path, log, width = loaded
    errors = [f"{entry['level']}: {entry['message']}" for entry in log if entry["level"] == "SEVERE"]
    assert not errors, f"{path.name} at {width} px logged:\n" + "\n".join(errors)


def test_nothing_is_fetched_from_the_network(loaded):
    driver, path, _, _ = loaded
    fetched = driver.execute_script(
        "return performance.getEntriesByType('resource').map(r => r.name)"
        ".filter(n => !n.startsWith('data:') && !n.startsWith('file:'))"
    )
    assert not fetched, f"{path.name} is not self-contained; it fetched: {fetched}"


OVERFLOW = r"""
const vw = document.documentElement.clientWidth;
const scrollsSideways = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
const fits = r => r.left >= -1 && r.right <= vw + 1;
const describe = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.classList.length ? '.' + [...el.classList].join('.') : '') +
    ' "' + (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 40) + '"';
const wide = [];
for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if ((r.width === 0 && r.height === 0) || fits(r)) continue;
    if (getComputedStyle(el).visibility === 'hidden') continue;
    let held = false;  // by a box that scrolls sideways and itself fits
    for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
        if (scrollsSideways(a)) { held = fits(a.getBoundingClientRect()); break; }
    }
    if (held) continue;
    // report the outermost offender only, not each of its descendants
    if (el.parentElement && wide.some(w => w.el.contains(el))) continue;
    wide.push({el, text: describe(el) + ' spans ' + Math.round(r.left) + '..' + Math.round(r.right) + ' px'});
}
return {vw, page: document.documentElement.scrollWidth, wide: wide.map(w => w.text)};
"""


def test_nothing_is_wider_than_the_viewport_unless_it_scrolls_in_its_own_box(loaded):
    driver, path, _, width = loaded
    found = driver.execute_script(OVERFLOW)
    assert not found["wide"], (
        f"{path.name} at {width} px (viewport {found['vw']} px, page "
        f"{found['page']} px wide):\n" + "\n".join(found["wide"][:20])
    )
    assert found["page"] <= found["vw"], f"{path.name} scrolls sideways at {width} px"


LINKS = """
return [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'));
"""


def _ids(path):
    return set(re.findall(r"""\s(?:id|name)=["']([^"']+)["']""", path.read_text(encoding="utf-8")))


def test_every_in_page_link_has_its_target(loaded):
    driver, path, _, _ = loaded
    build_dir = path.parent
    broken = []
    for href in driver.execute_script(LINKS):
        page, _, fragment = href.partition("#")
        if not fragment:
            continue
        if page == "":
            exists = driver.execute_script(
                "const id = decodeURIComponent(arguments[0]);"
                "return !!(document.getElementById(id) || document.getElementsByName(id).length)",
                fragment,
            )
        elif "/" not in page and page.endswith(".html") and (build_dir / page).exists():
            exists = fragment in _ids(build_dir / page)  # a link into the sibling page
        else:
            continue  # leaves the build: not this page's to check
        if not exists:
            broken.append(href)
    assert not broken, f"{path.name}: links without a target: {broken[:20]}"


def test_every_image_loads(loaded):
    driver, path, _, _ = loaded
    images = driver.execute_script(
        "return [...document.images].map(i => [i.getAttribute('src').slice(0, 60), i.complete && i.naturalWidth > 0])"
    )
    assert images or path.name != "article.html", "the article shows its figures"
    broken = [src for src, ok in images if not ok]
    assert not broken, f"{path.name}: images that did not load: {broken}"


BOUND = """
return [...document.querySelectorAll('a.bound-value, a.bound-source')].map(a => ({
    cls: a.className, text: a.textContent, title: a.getAttribute('title') || '',
    href: a.getAttribute('href') || ''}));
"""


def test_every_bound_number_has_its_tooltip_and_its_link(loaded):
    driver, path, _, width = loaded
    build_dir = path.parent
    lacking = []
    for b in driver.execute_script(BOUND):
        page, _, fragment = b["href"].partition("#")
        if page == "":
            target = driver.execute_script(
                "return !!document.getElementById(decodeURIComponent(arguments[0]))", fragment
            )
        else:
            target = (build_dir / page).exists() and fragment in _ids(build_dir / page)
        if not b["title"] or not target:
            lacking.append(f"{b['text']!r} (title {b['title']!r}, link {b['href']!r})")
    assert not lacking, f"{path.name} at {width} px: bound values without a tooltip or link: {lacking[:20]}"


def test_every_value_the_article_prints_in_prose_is_a_bound_link(browser, build_dir, built_project):
    open_page(browser, build_dir / "article.html", WIDTHS["desktop"])
    numbers = [b for b in browser.execute_script(BOUND) if "bound-value" in b["cls"]]
    # the article this page was made from: the example's own, or (Quarto's
    # render, made into a folder of its own) this project's
    project = build_dir.parent if (build_dir.parent / "article" / "index.qmd").exists() else built_project
    printed = [
        sc
        for sc in scan((project / "article" / "index.qmd").read_text(encoding="utf-8"))
        if sc.name == "value" and sc.context == "prose" and not sc.escaped
    ]
    # the departures section's values are bound by `bind` from the baseline, not typed as shortcodes
    departures = json.loads((project / "build" / "bindings.json").read_text(encoding="utf-8"))
    from_baseline = departures.get("departures_md", "").count("{.bound-value}")
    assert len(numbers) == len(printed) + from_baseline > 0


def test_the_robustness_page_shows_a_histogram_for_each_value_that_varies(browser, built_project):
    """Each histogram an SVG image that loads and fits its card on a phone;
    one for every printed value whose 5-95 % range is not a single number."""
    report = json.loads((built_project / "build/robustness.json").read_text())
    varying = [row for row in report["printed"] if "p05" in row and row["p05"] != row["p95"]]
    assert varying, "the sweep found no value that moves with the seed"
    for width in WIDTHS.values():
        open_page(browser, built_project / "build/robustness.html", width)
        plots = browser.execute_script(
            "return [...document.querySelectorAll('img.dist')].map(i => [i.naturalWidth > 0, "
            "i.getBoundingClientRect().right <= document.documentElement.clientWidth])"
        )
        assert len(plots) == len(varying), f"{len(plots)} histograms for {len(varying)} varying values"
        assert all(loaded and fits for loaded, fits in plots), f"at {width} px: {plots}"


# --- accessible pages: axe-core in the browser -------------------------------------------
#
# axe-core (Deque's rules for WCAG 2.x, the version tests/axe/package-lock.json
# pins; `npm ci --prefix tests/axe` installs it, .ci/run does) runs inside
# each page at each width above, and finds no serious or critical
# violation: colour contrast, a box that scrolls but cannot take focus, an
# image without alt text, ARIA misused. Without axe-core these tests skip,
# saying how to install it; REQUIRE_AXE=1 or REQUIRE_BROWSER=1 (CI) turns
# that skip into a failure.

AXE_FOLDER = Path(__file__).resolve().parent / "axe"
AXE_SCRIPT = AXE_FOLDER / "node_modules" / "axe-core" / "axe.min.js"
GRAVE = ("serious", "critical")


@pytest.fixture(scope="session")
def axe_source():
    """axe-core's script, the version tests/axe/package.json pins."""
    pinned = json.loads((AXE_FOLDER / "package.json").read_text(encoding="utf-8"))["dependencies"]["axe-core"]
    installed = AXE_SCRIPT.parent / "package.json"
    reason = None
    if not AXE_SCRIPT.is_file():
        reason = f"axe-core is not installed ({AXE_SCRIPT} is missing): run `npm ci --prefix tests/axe`"
    elif json.loads(installed.read_text(encoding="utf-8"))["version"] != pinned:
        reason = (
            f"{installed} is axe-core {json.loads(installed.read_text(encoding='utf-8'))['version']}, not "
            f"the {pinned} tests/axe/package.json pins: run `npm ci --prefix tests/axe`"
        )
    if reason:
        if "1" in (os.environ.get("REQUIRE_AXE"), os.environ.get("REQUIRE_BROWSER")):
            pytest.fail(f"REQUIRE_AXE=1 or REQUIRE_BROWSER=1, but the accessibility checks cannot run: {reason}")
        pytest.skip(reason)
    return AXE_SCRIPT.read_text(encoding="utf-8")


AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(' ') + ': ' + n.failureSummary.replace(/\\s+/g, ' '))}))));
"""


def axe_violations(driver, source):
    """axe-core's violations on the page loaded in `driver`: [{id, impact, help, nodes}]."""
    forget_page(driver)  # axe is injected into it, and may scroll it
    driver.set_script_timeout(120)
    driver.execute_script(source)
    return driver.execute_async_script(AXE_RUN)


def grave(violations):
    """The serious and critical ones, one line per element."""
    return [
        f"{v['id']} ({v['impact']}: {v['help']}) {node}"
        for v in violations
        if v["impact"] in GRAVE
        for node in v["nodes"]
    ]


def test_axe_finds_no_serious_or_critical_violation(loaded, axe_source):
    driver, path, _, width = loaded
    found = grave(axe_violations(driver, axe_source))
    assert not found, f"{path.name} at {width} px: {len(found)} serious or critical:\n" + "\n".join(found[:30])


def test_a_box_that_scrolls_takes_focus_and_has_a_name(loaded):
    """Every box that scrolls sideways once its content is wider (a code
    block, a table, a displayed equation, the matrix's table) can take
    keyboard focus, under a name (its aria-label, or a table's caption), at
    every width: axe asks it only of the boxes that overflow at this one. A
    box of links (Quarto's margin with its contents) is scrolled by tabbing
    through them."""
    driver, path, _, width = loaded
    lacking = driver.execute_script("""
        const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
        const named = el => el.getAttribute('aria-label') || (el.tagName === 'TABLE' && el.querySelector('caption'));
        const ofLinks = el => el.querySelector('nav a[href]');
        return [...document.body.querySelectorAll('*')]
            .filter(el => scrolls(el) && el.tagName.toLowerCase() !== 'math' && !ofLinks(el) &&
                          !el.closest('nav, [aria-hidden="true"]'))
            .filter(el => el.tabIndex !== 0 || !named(el))
            .map(el => el.outerHTML.slice(0, 120));
    """)
    assert not lacking, f"{path.name} at {width} px: boxes that scroll without focus or a name: {lacking[:10]}"


FIGURES = """
return [...document.querySelectorAll('figure img')].map(i => ({
    alt: i.getAttribute('alt') || i.getAttribute('aria-label') || '', caption: (i.closest('figure').querySelector('figcaption') || {}).textContent || ''}));
"""


def test_every_figure_says_what_its_data_show_not_its_caption_again(browser, build_dir, built_project):
    """Each figure's alt text (Quarto's page: its aria-label) is the one its
    file carries (the SVG's title, written by save_figure from the data it
    plots), not its caption."""
    from articlekit.article.figures import alt_text

    open_page(browser, build_dir / "article.html", WIDTHS["desktop"])
    shown = browser.execute_script(FIGURES)
    # the figures this page was made from: the example's own, or (Quarto's render) this project's
    project = build_dir.parent if (build_dir.parent / "figures").is_dir() else built_project
    written = [alt_text(path.read_bytes(), "image/svg+xml") for path in sorted((project / "figures").glob("*.svg"))]
    assert shown and all(written), f"figures on the page: {len(shown)}; figure files without a title: {written}"
    for figure in shown:
        assert figure["alt"] in written, f"{figure['alt'][:100]!r} is no figure file's title"
        assert figure["alt"] not in figure["caption"]


def claims_page(tmp_path):
    """An article with a claim that holds, one that fails and one that is
    inconclusive (tests/test_claim_status.py's), bound with strict=false and
    rendered as the build renders it: the page that shows both marks."""
    from articlekit.article.bind import bind
    from articlekit.render import page as rendermod
    from tests.test_claim_status import ARTICLE, values_doc

    folder = tmp_path / "article"
    folder.mkdir()
    copy_article_files(folder)
    article = folder / "index.qmd"
    article.write_text(ARTICLE, encoding="utf-8")
    values = values_doc()
    write_json(folder / "build" / "values.json", values)
    bindings = folder / "build" / "bindings.json"
    write_json(bindings, bind(str(article), ARTICLE, values, strict=False))
    html_out = folder / "build" / "article.html"
    rendermod.render(article, bindings, "pandoc", html_out, folder / "build" / "article.md")
    return html_out


def test_the_claim_marks_read_without_colour_and_pass_axe(browser, axe_source, tmp_path):
    """The red mark of a failed claim and the amber one of an inconclusive
    claim: each has its sign and its word (core.status, never colour alone),
    and axe finds their contrast and everything else on the page sufficient."""
    from articlekit.core.status import FAILS, INCONCLUSIVE, STATUS

    page = claims_page(tmp_path)
    for width in WIDTHS.values():
        open_page(browser, page, width)
        marks = browser.execute_script(
            "return [...document.querySelectorAll('.claim-failed, .claim-inconclusive')]"
            ".map(m => [m.className, m.textContent])"
        )
        for status in (FAILS, INCONCLUSIVE):
            said = [text for cls, text in marks if cls == STATUS[status].page_class]
            assert said and all(text.startswith(STATUS[status].page_mark) for text in said), marks
        found = grave(axe_violations(browser, axe_source))
        assert not found, f"the claims page at {width} px:\n" + "\n".join(found)


# --- zero requests: hostile prose is refused, and what is built loads nothing -----------
#
# As a reviewer would check it: a logging HTTP server on 127.0.0.1, and every
# trick of issue 26 aimed at it. Planted in a copy's prose, each is refused
# by the build's own commands (parse, and render without a tree, both
# renderers), with its line, and the server hears nothing meanwhile (Pandoc
# fetched <link rel=stylesheet> while rendering). The pages that are built
# (Pandoc's and Quarto's) make no request at all in Chromium, by its own
# network log (the DevTools protocol's Network events, not the page's
# Performance API, which a navigation would reset). And the listener is no
# blind one: the same tricks planted into a copy of the built page itself
# do reach the server from Chromium, and the page check refuses that page.


def hostile_lines(port):
    at = f"http://127.0.0.1:{port}"
    return {
        "img-file": '<img src="/etc/passwd">',
        "script-file": '<script src="/etc/hostname"></script>',
        "fetch": f'<script>fetch("{at}/fetch")</script>',
        "onerror": f'<img src="x.png" onerror="fetch(\'{at}/onerror\')">',
        "srcdoc": f'<iframe srcdoc="<img src={at}/srcdoc>"></iframe>',
        "background": f'<table background="{at}/background"><tr><td>x</td></tr></table>',
        "image-set": f"<div style=\"background-image: image-set('{at}/image-set' 1x)\">x</div>",
        "base": f'<base href="{at}/base/">',
        "refresh": f'<meta http-equiv="refresh" content="1; url={at}/refresh">',
        "alternate": f'<link rel="alternate stylesheet" href="{at}/alternate.css">',
        "stylesheet": f'<link rel=stylesheet href="{at}/stylesheet.css">',
        "cdn": f'<script src="{at}/cdn.js"></script>',
        "svg-use": f'<svg><use href="{at}/use.svg#a"/></svg>',
        "comment": f'<!--><img src="{at}/comment">-->',
        "md-image": f"![x]({at}/md-image.png)",
        "md-attr": f'[x]{{onmouseover="fetch(\'{at}/md-attr\')"}}',
    }


@pytest.fixture
def logging_server():
    """An HTTP server on 127.0.0.1 that records every request's path."""
    import http.server
    import threading

    heard = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the standard library's name)
            heard.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"heard\n")

        do_POST = do_HEAD = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], heard
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def network_browser():
    """Chromium with its DevTools Network log on (performance log)."""
    reason = _unavailable()
    if reason:
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1 but the browser tests cannot run: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _find("chromium", "chromium-browser", "google-chrome")
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=_find("chromedriver")), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def requests_made(driver, path, settle=2.0):
    """Open `path`, let it run `settle` seconds (a refresh waits 1 s), and
    -> every URL Chromium asked the network for: its Network log's requests,
    less the page's own file, data: URLs and those the page's
    Content-Security-Policy refused before they left (blockedReason csp)."""
    import time

    driver.get_log("performance")  # drop earlier pages' events
    page = Path(path).resolve().as_uri()
    driver.get(page)
    time.sleep(settle)
    asked, refused = {}, set()
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if not url.startswith("data:") and url != page:
                asked.setdefault(message["params"]["requestId"], url)
        elif message["method"] == "Network.loadingFailed" and message["params"].get("blockedReason") == "csp":
            refused.add(message["params"]["requestId"])  # the page's own policy refused it: nothing left Chromium
    return [url for request, url in asked.items() if request not in refused]


def test_hostile_prose_is_refused_by_both_renderers_and_nothing_is_fetched(built_project, tmp_path, logging_server):
    from tests.workspace import copy_environment

    port, heard = logging_server
    lines = hostile_lines(port)
    work = tmp_path / "project"
    shutil.copytree(built_project, work, symlinks=True, ignore=shutil.ignore_patterns(".snakemake"))
    article = work / "article" / "index.qmd"
    text = article.read_text(encoding="utf-8")
    at = text.index("\n## ") + 1  # before the first section, each trick its own paragraph
    article.write_text(text[:at] + "".join(f"{line}\n\n" for line in lines.values()) + text[at:], encoding="utf-8")
    first = text[:at].count("\n") + 1
    expected = [f"article/index.qmd:{first + 2 * n}:" for n in range(len(lines))]
    env = {**copy_environment(work), "PATH": f"{quarto_folder() or ''}{os.pathsep}{os.environ['PATH']}"}
    # the bound article, as bind writes it for the build's parse (bind checks
    # shortcodes, not what else the prose holds)
    bound = work / "build" / "hostile.bound.md"
    document = json.loads((work / "build" / "bindings.json").read_text(encoding="utf-8"))
    bound.write_text(bound_markdown(article.read_text(encoding="utf-8"), document), encoding="utf-8")
    commands = {"parse": ["parse", "article/index.qmd", "--bound", str(bound), "--out", "build/hostile.ast.json"]}
    for renderer in ("pandoc", "quarto") if quarto_folder() else ("pandoc",):
        commands[renderer] = [
            "render",
            "article/index.qmd",
            "--bindings",
            "build/bindings.json",
            "--renderer",
            renderer,
            "--html",
            "build/article.html",
            "--md",
            "build/article.md",
        ]
    good = (work / "build" / "article.html").read_bytes()
    for name, command in commands.items():
        done = subprocess.run(
            [sys.executable, "-m", "articlekit", *command],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 1, f"{name}:\n{done.stderr[-3000:]}"
        named = [line for line in expected if line in done.stderr]
        assert named == expected, f"{name} named {named} of {expected}:\n{done.stderr[-4000:]}"
    assert (work / "build" / "article.html").read_bytes() == good  # the old page stays
    assert not (work / "build" / "hostile.ast.json").exists()
    assert heard == [], f"the build itself fetched {heard}"


@pytest.mark.parametrize("render", ["as-built", "quarto"])
def test_the_built_page_makes_no_request_in_chromium(render, network_browser, build_dirs, tmp_path, logging_server):
    port, heard = logging_server
    page = build_dirs(render) / "article.html"
    assert requests_made(network_browser, page) == [] and heard == []
    # the control: the same tricks in a copy of this very page reach the
    # server from Chromium, and the page check refuses that page
    from articlekit.render.pagecheck import POLICY_META

    tricks = [line for key, line in hostile_lines(port).items() if not key.startswith("md-")]
    hostile = page.read_text(encoding="utf-8").replace("</body>", "\n".join(tricks) + "\n</body>")
    assert POLICY_META in hostile
    # the page's own policy is a second lock: with it, no trick loads
    # anything but what no <meta> policy governs in Chromium (a refresh's
    # navigation, and the page it lands on; an SVG <use> of another file),
    # which the page check refuses
    locked = tmp_path / "locked.html"
    locked.write_text(hostile, encoding="utf-8")
    past_the_policy = {url.split(f":{port}", 1)[-1] for url in requests_made(network_browser, locked)}
    assert past_the_policy <= {"/refresh", "/favicon.ico", "/use.svg"}, past_the_policy
    heard.clear()
    planted = tmp_path / "article.html"
    planted.write_text(hostile.replace(POLICY_META, ""), encoding="utf-8")
    made = requests_made(network_browser, planted)
    assert any(url.startswith(f"http://127.0.0.1:{port}/") for url in made) and heard, made
    from articlekit.render.pagecheck import PageError, check_page

    with pytest.raises(PageError, match=r"line \d+"):
        check_page(planted, {}, "article/_quarto.yml")
