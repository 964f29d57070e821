"""csan-serve's web page in headless Chromium, driven by Selenium (Debian's chromium,
chromium-driver and python3-selenium): the model picker fills from /models; a typed
sentence translates by the button and by Ctrl+Enter to the text csan-generate gives;
the alternatives open on click and by keyboard; a refused request shows its error in words.
Run by test_cli_serve (ServeCli.WebPageInHeadlessChromium) against a running server."""

from __future__ import annotations

import argparse
import shutil
import sys

try:
    from selenium import webdriver
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    sys.exit("serve_browser.py: needs python3-selenium, chromium and chromium-driver (tools/install-deps.sh --browser)")


def browser() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    chromium = shutil.which("chromium")
    if chromium:
        options.binary_location = chromium
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(driver), options=options)


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("--url", "--text", "--expect", "--text2", "--expect2"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    page = browser()
    try:
        # The page replaces its result list when an answer arrives: an element found just
        # before that is stale, and the wait looks again.
        wait = WebDriverWait(page, 60, ignored_exceptions=(StaleElementReferenceException,))
        page.get(args.url)
        wait.until(lambda p: p.find_element(By.ID, "model").get_attribute("data-loaded") == "true")
        picker = page.find_element(By.ID, "model")
        assert picker.get_attribute("value") == "toy", picker.get_attribute("value")
        assert "src \u2192 tgt" in picker.text, picker.text

        def translation() -> str:
            wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#result li .translation")))
            return page.find_element(By.CSS_SELECTOR, "#result li .translation").text

        # Type, click Translate.
        source = page.find_element(By.ID, "source")
        source.send_keys(args.text)
        page.find_element(By.ID, "translate").click()
        got = translation()
        assert got == args.expect, f"button: {got!r} != {args.expect!r}"
        assert "ms" in page.find_element(By.ID, "time").text
        # The alternatives open on click: n-best, the first being the translation.
        toggle = page.find_element(By.CSS_SELECTOR, "#result li .alternatives-toggle")
        assert toggle.get_attribute("aria-expanded") == "false"
        toggle.click()
        items = page.find_elements(By.CSS_SELECTOR, "#result li .alternatives li")
        assert len(items) == 5, len(items)
        assert items[0].text.startswith(args.expect), items[0].text
        assert toggle.get_attribute("aria-expanded") == "true"

        # Keyboard only: another sentence, Ctrl+Enter.
        source.clear()
        source.send_keys(args.text2)
        source.send_keys(Keys.CONTROL, Keys.ENTER)
        wait.until(lambda p: p.find_element(By.CSS_SELECTOR, "#result li .translation").text == args.expect2)

        # The button is enabled again once the answer is shown and the request done.
        wait.until(lambda p: p.find_element(By.ID, "translate").is_enabled())

        # A sentence over the server's --max-sentence-bytes: the error in words, no result.
        source.clear()
        source.send_keys("x" * 300)
        page.find_element(By.ID, "translate").click()
        wait.until(ec.visibility_of_element_located((By.ID, "error")))
        error = page.find_element(By.ID, "error").text
        assert "Translation failed" in error and "more than the server's limit" in error, error
        assert not page.find_element(By.ID, "output").is_displayed()

        # Nothing typed: said so, without asking the server.
        source.clear()
        page.find_element(By.ID, "translate").click()
        wait.until(lambda p: "Type a sentence" in p.find_element(By.ID, "error").text)
    finally:
        page.quit()
    print("browser test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
