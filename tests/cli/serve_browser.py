"""csan-serve's web page in a real headless browser: the model picker fills from /models; a
typed sentence translates by the button and by Ctrl+Enter to the text csan-generate gives; the
alternatives open on click; a refused request shows its error in words.

--browser chromium (the default): Debian's chromium and chromium-driver through Selenium
(python3-selenium). --browser firefox: Debian's firefox-esr through WebDriver BiDi
(webdriver_bidi.py, python3-websocket). Run by test_cli_serve
(ServeCli.WebPageInHeadlessChromium, ServeCli.WebPageInHeadlessFirefox) against a running
server. Both browsers go through the same steps (`scenario`): the page object of each turns
them into its driver's calls, looking each element up anew (the page replaces its result
list when an answer arrives)."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from typing import Any, Callable, Optional

TIMEOUT_S = 60.0


class ChromiumPage:
    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        self._by, self._keys = By, Keys
        options = webdriver.ChromeOptions()
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
            options.add_argument(flag)
        chromium = shutil.which("chromium")
        if chromium:
            options.binary_location = chromium
        driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
        self._driver = webdriver.Chrome(service=Service(driver), options=options)

    def _find(self, css: str) -> Any:
        return self._driver.find_element(self._by.CSS_SELECTOR, css)

    def get(self, url: str) -> None:
        self._driver.get(url)

    def attribute(self, css: str, name: str) -> Optional[str]:
        return self._find(css).get_attribute(name)

    def text(self, css: str) -> str:
        return self._find(css).text

    def count(self, css: str) -> int:
        return len(self._driver.find_elements(self._by.CSS_SELECTOR, css))

    def displayed(self, css: str) -> bool:
        found = self._driver.find_elements(self._by.CSS_SELECTOR, css)
        return bool(found) and found[0].is_displayed()

    def enabled(self, css: str) -> bool:
        return self._find(css).is_enabled()

    def click(self, css: str) -> None:
        self._find(css).click()

    def type(self, css: str, text: str) -> None:
        self._find(css).send_keys(text)

    def clear(self, css: str) -> None:
        self._find(css).clear()

    def ctrl_enter(self, css: str) -> None:
        self._find(css).send_keys(self._keys.CONTROL, self._keys.ENTER)

    def quit(self) -> None:
        self._driver.quit()


# The element's state as the page shows it, for the Firefox page: one function each, run in
# the page by script.callFunction.
_JS_ELEMENT = "(css) => document.querySelector(css)"
_JS_ATTRIBUTE = "(css, name) => { const e = document.querySelector(css); return e ? e.getAttribute(name) : null; }"
_JS_TEXT = "(css) => { const e = document.querySelector(css); return e ? e.innerText : null; }"
_JS_COUNT = "(css) => document.querySelectorAll(css).length"
_JS_DISPLAYED = ("(css) => { const e = document.querySelector(css); if (!e) return false;"
                 " const s = getComputedStyle(e); return s.visibility !== 'hidden' && s.display !== 'none'"
                 " && e.getClientRects().length > 0; }")
_JS_ENABLED = "(css) => !document.querySelector(css).disabled"
_JS_FOCUS = "(css) => document.querySelector(css).focus()"
# As Selenium's clear(): empty the field and tell the page.
_JS_CLEAR = ("(css) => { const e = document.querySelector(css); e.focus(); e.value = '';"
             " e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); }")


class FirefoxPage:
    def __init__(self) -> None:
        from webdriver_bidi import CONTROL, ENTER, Firefox

        self._control, self._enter = CONTROL, ENTER
        self._firefox = Firefox(TIMEOUT_S)

    def get(self, url: str) -> None:
        self._firefox.navigate(url)

    def attribute(self, css: str, name: str) -> Optional[str]:
        return self._firefox.call(_JS_ATTRIBUTE, css, name)

    def text(self, css: str) -> str:
        found = self._firefox.call(_JS_TEXT, css)
        if found is None:
            raise LookupError(css)
        return found.strip()

    def count(self, css: str) -> int:
        return int(self._firefox.call(_JS_COUNT, css))

    def displayed(self, css: str) -> bool:
        return bool(self._firefox.call(_JS_DISPLAYED, css))

    def enabled(self, css: str) -> bool:
        return bool(self._firefox.call(_JS_ENABLED, css))

    def click(self, css: str) -> None:
        element = self._firefox.call(_JS_ELEMENT, css)
        if element is None:
            raise LookupError(css)
        self._firefox.click(element)

    def type(self, css: str, text: str) -> None:
        self._firefox.call(_JS_FOCUS, css)
        self._firefox.keys(text)

    def clear(self, css: str) -> None:
        self._firefox.call(_JS_CLEAR, css)

    def ctrl_enter(self, css: str) -> None:
        self._firefox.call(_JS_FOCUS, css)
        self._firefox.keys(self._enter, held=self._control)

    def quit(self) -> None:
        self._firefox.quit()


def wait_until(condition: Callable[[], Any], what: str) -> Any:
    """Polls until `condition` is true; an element missing or replaced meanwhile counts as not yet."""
    deadline = time.monotonic() + TIMEOUT_S
    last_error: Optional[Exception] = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception as error:  # noqa: BLE001 - stale or missing elements: look again
            last_error = error
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}" + (f" (last error: {last_error})" if last_error else ""))


def scenario(page: Any, args: argparse.Namespace) -> None:
    page.get(args.url)
    wait_until(lambda: page.attribute("#model", "data-loaded") == "true", "the model picker")
    # The picker's value is read by the page's script: the attribute only holds the first one.
    assert page.count("#model option") >= 1
    picked = page.text("#model option:checked")
    assert "toy" in picked and "src \u2192 tgt" in picked, picked

    def translation() -> str:
        wait_until(lambda: page.displayed("#result li .translation"), "a translation")
        return page.text("#result li .translation")

    # Type, click Translate.
    page.type("#source", args.text)
    page.click("#translate")
    got = translation()
    assert got == args.expect, f"button: {got!r} != {args.expect!r}"
    assert "ms" in page.text("#time")
    # The alternatives open on click: n-best, the first being the translation.
    toggle = "#result li .alternatives-toggle"
    assert page.attribute(toggle, "aria-expanded") == "false"
    page.click(toggle)
    wait_until(lambda: page.attribute(toggle, "aria-expanded") == "true", "the alternatives to open")
    assert page.count("#result li .alternatives li") == 5, page.count("#result li .alternatives li")
    first = page.text("#result li .alternatives li")
    assert first.startswith(args.expect), first

    # Keyboard only: another sentence, Ctrl+Enter.
    page.clear("#source")
    page.type("#source", args.text2)
    page.ctrl_enter("#source")
    wait_until(lambda: page.text("#result li .translation") == args.expect2, "the Ctrl+Enter translation")

    # The button is enabled again once the answer is shown and the request done.
    wait_until(lambda: page.enabled("#translate"), "the button to be enabled")

    # A sentence over the server's --max-sentence-bytes: the error in words, no result.
    page.clear("#source")
    page.type("#source", "x" * 300)
    page.click("#translate")
    wait_until(lambda: page.displayed("#error"), "the error")
    error = page.text("#error")
    assert "Translation failed" in error and "more than the server's limit" in error, error
    assert not page.displayed("#output")

    # Nothing typed: said so, without asking the server.
    page.clear("#source")
    page.click("#translate")
    wait_until(lambda: "Type a sentence" in page.text("#error"), "the empty-input message")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--browser", choices=("chromium", "firefox"), default="chromium")
    for name in ("--url", "--text", "--expect", "--text2", "--expect2"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    try:
        page = ChromiumPage() if args.browser == "chromium" else FirefoxPage()
    except ImportError as missing:
        sys.exit(f"serve_browser.py: {missing}: --browser chromium needs python3-selenium, chromium and "
                 "chromium-driver; --browser firefox needs firefox-esr and python3-websocket")
    try:
        scenario(page, args)
    finally:
        page.quit()
    print(f"browser test passed ({args.browser})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
