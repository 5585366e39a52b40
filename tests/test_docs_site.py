"""The documentation site: ``mkdocs build --strict`` (what ``make docs`` runs) builds it, and a real headless
browser (Debian's chromium and chromium-driver, driven by Selenium) loads the built getting-started page and a
tutorial page over a localhost HTTP server, finds their headings and code blocks rendered and no broken image,
and saves a screenshot of each (``out/docs-*.png``)."""
import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "out")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or (os.path.exists("/usr/lib/chromium/chromedriver")
                                                 and "/usr/lib/chromium/chromedriver")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built in strict mode into a scratch folder (the same command as ``make docs``)."""
    folder = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return folder


@pytest.mark.slow
def test_the_site_builds_in_strict_mode_with_every_page(site):
    for page in ("index.html", "getting-started.html", "tutorials/joints.html", "tutorials/collision-lab.html",
                 "coming-from-pymunk.html", "coming-from-box2d.html", "units.html", "gallery.html",
                 "api/world.html", "api/geometry.html"):
        assert (site / page).exists(), page
    api = (site / "api" / "world.html").read_text(encoding="utf-8")
    assert "add_body" in api                                       # the reference is made from the docstrings
    assert "Handles of all bodies" in api                          # World.bodies' docstring
    gallery = (site / "gallery.html").read_text(encoding="utf-8")
    assert gallery.count('src="gallery/') >= 15                   # the examples' pictures


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """Strict mode is on: a page linking to a missing page does not build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# x\n\n[missing](nowhere.md)\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nstrict: true\n")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                             str(tmp_path / "site")], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert result.returncode != 0 and "nowhere.md" in result.stdout + result.stderr


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site):
    """An HTTP server on localhost serving the built site; yields its base URL."""
    handler = functools.partial(_Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium through Selenium and Debian's chromedriver, with a fresh profile and no network
    chatter."""
    assert CHROMIUM and CHROMEDRIVER, ("the browser test needs Debian's chromium and chromium-driver "
                                       "(.ci/run installs them: apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1280,1000",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.mark.slow
@pytest.mark.parametrize("page, heading, screenshot", [
    ("getting-started.html", "Getting started", "docs-getting-started.png"),
    ("tutorials/joints.html", "Joints", "docs-tutorial-joints.png"),
])
def test_a_real_browser_renders_the_page(server, browser, page, heading, screenshot):
    from selenium.webdriver.common.by import By
    browser.get(f"{server}/{page}")
    h1 = browser.find_element(By.TAG_NAME, "h1")
    assert h1.text.strip() == heading
    assert len(browser.find_elements(By.CSS_SELECTOR, "h2")) >= 3
    blocks = browser.find_elements(By.CSS_SELECTOR, "div.highlight pre code")
    assert len(blocks) >= 3
    assert all(b.is_displayed() for b in blocks[:3])
    assert any("import carom" in b.text for b in blocks)              # the code text itself is there
    spans = browser.find_elements(By.CSS_SELECTOR, "div.highlight pre code span")
    assert len(spans) > 20                                          # highlighted: code split into tokens
    # every image loaded (naturalWidth > 0 once complete); the page waits for them
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.currentSrc || i.src, i.complete, i.naturalWidth]);")
    broken = [src for src, complete, width in images if not complete or width == 0]
    assert len(images) >= 1 and not broken, images                 # the page's picture loaded
    # the theme's stylesheet applied: the code blocks are not the browser's default serif text on white
    family = browser.execute_script("return getComputedStyle(document.querySelector('pre code')).fontFamily;")
    assert "mono" in family.lower() or "courier" in family.lower() or "consol" in family.lower()
    os.makedirs(OUT, exist_ok=True)
    height = browser.execute_script("return document.documentElement.scrollHeight;")
    browser.set_window_size(1280, min(max(height, 800), 6000))     # the whole page in the screenshot
    path = os.path.join(OUT, screenshot)
    assert browser.save_screenshot(path)
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_gallery_page_shows_the_examples_pictures(server, browser):
    browser.get(f"{server}/gallery.html")
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth]);")
    gifs = [(src, complete, width) for src, complete, width in images if src.startswith("gallery/")]
    assert len(gifs) >= 15
    assert all(complete and width > 0 for _, complete, width in gifs), gifs


def test_the_api_reference_reads_without_sphinx_role_names(site):
    api = (site / "api" / "world.html").read_text(encoding="utf-8")
    assert ":attr:" not in api and ":meth:" not in api and "<code>contact_data</code>" in api
