"""Browser tests of countdown-console in headless Chromium (Debian's chromium + chromium-driver, Selenium).

Run by scripts/console-browser-tests, which starts PostgreSQL, Redis and two consoles: TRUSTED_URL trusts the
browser's address (127.0.0.1) as the proxy, UNTRUSTED_URL trusts only 10.0.0.0/8. The browser plays the
authenticating proxy by sending X-Forwarded-User / X-Forwarded-Groups on every request (Chrome DevTools
Network.setExtraHTTPHeaders). Every check prints one line; the first failure stops the run with exit 1.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

TRUSTED = os.environ["TRUSTED_URL"]
UNTRUSTED = os.environ["UNTRUSTED_URL"]
XSS_TITLE = os.environ["XSS_TITLE"]
OPERATOR = {"X-Forwarded-User": "ada", "X-Forwarded-Groups": "staff,oncall"}
VIEWER = {"X-Forwarded-User": "vic", "X-Forwarded-Groups": "staff"}


def check(condition, what):
    if not condition:
        print(f"FAIL: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def http(method, url, headers=None, form=None):
    """(status, content type, body) of one request outside the browser (the JSON routes)."""
    data = None
    headers = dict(headers or {})
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


def as_json(who):
    return dict(who, Accept="application/json")


def stream_status(stream):
    status, _, body = http("GET", f"{TRUSTED}/streams/{stream}", as_json(OPERATOR))
    return json.loads(body)["report"]["status"] if status == 200 else f"HTTP {status}"


def browser():
    options = Options()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-extensions", "--window-size=1280,900"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    driver.set_page_load_timeout(20)
    driver.execute_cdp_cmd("Network.enable", {})
    return driver


def sign_in(driver, who):
    """What the authenticating proxy does: every request carries the user and groups headers."""
    driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": who})


def navigate(driver, action):
    """Does `action` (a click or Enter that loads a page) and waits until the new page replaced the old one."""
    old = driver.find_element(By.TAG_NAME, "html")
    action()
    WebDriverWait(driver, 15).until(lambda _: replaced(old))
    WebDriverWait(driver, 15).until(lambda d: d.execute_script("return document.readyState") == "complete")


def replaced(element):
    """True once `element` left the document. Chromium answers a node of a page being replaced either as stale or, in
    the middle of the swap, with "Node with given id does not belong to the document": both mean the old page is gone."""
    try:
        element.is_enabled()
        return False
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise


def h1(driver):
    return driver.find_element(By.TAG_NAME, "h1").text


def screenshot(driver, name, scroll_to="h1"):
    """Saves the page from `scroll_to` down as CONSOLE_SCREENSHOTS/console-<name>.png when that directory is set
    (small: 1000 px wide)."""
    directory = os.environ.get("CONSOLE_SCREENSHOTS")
    if not directory:
        return
    driver.set_window_size(1000, 760)
    driver.execute_script("arguments[0].scrollIntoView()", driver.find_element(By.CSS_SELECTOR, scroll_to))
    driver.save_screenshot(os.path.join(directory, f"console-{name}.png"))
    driver.set_window_size(1280, 900)


def main():
    started = time.monotonic()
    driver = browser()
    try:
        sign_in(driver, OPERATOR)
        driver.get(TRUSTED + "/")
        check(h1(driver) == "Fleet", "signed in through the proxy headers, the fleet page shows")
        check("ada (operator)" in driver.find_element(By.TAG_NAME, "header").text, "the header names the operator")
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.TAB)
        check(driver.switch_to.active_element.text == "Skip to content", "the first Tab stop is the skip link")

        search = driver.find_element(By.ID, "q")
        label = driver.find_element(By.CSS_SELECTOR, "label[for=q]").text
        check(label == "Id (or its beginning), stream title or user name", "the search box has a label")
        navigate(driver, lambda: search.send_keys("xss1", Keys.ENTER))
        check(driver.current_url.endswith("/streams/xss1") and h1(driver) == "Stream xss1", "search by id opens the stream")
        title = driver.find_element(By.XPATH, "//dt[text()='Title']/following-sibling::dd[1]").text
        check(title == XSS_TITLE, "the XSS payload in the title renders as text")
        check(driver.title != "pwned" and not driver.find_elements(By.TAG_NAME, "script"), "no script from the title ran or exists")
        check(not driver.find_elements(By.CSS_SELECTOR, "main img"), "no element from the title was created")
        check("not_ios" in driver.page_source, "the Android device's decision says not_ios")

        navigate(driver, driver.find_element(By.LINK_TEXT, "Cancel this stream…").click)
        check(h1(driver) == "Cancel stream xss1?", "the cancel link opens the confirmation page, titled in words")
        counts = driver.find_element(By.CSS_SELECTOR, "dl.counts").text
        check("Devices of the creator and guests" in counts, "the cancel confirmation shows its counts")
        screenshot(driver, "confirm")
        check("Cancels stream xss1" in driver.page_source, "the confirmation states the effect")
        driver.find_element(By.ID, "reason").send_keys("browser test: creator asked")
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "form.action button[type=submit]").click)
        check(h1(driver) == "Done: Cancel stream xss1", "the confirmed cancel is done")
        check(stream_status("xss1") == "cancelled", "the stream is cancelled")

        navigate(driver, driver.find_element(By.LINK_TEXT, "Audit").click)
        rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "main table tbody tr")]
        check(any("stream.cancel" in row and "xss1" in row and "browser test: creator asked" in row and "ada" in row for row in rows),
              "the audit page lists the cancel with actor, target and reason")
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "main table tbody a[href='/streams/xss1']").click)
        check(h1(driver) == "Stream xss1", "the audit row's target links to the stream")
        timeline = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.timeline tbody tr")]
        cancel_rows = [row for row in timeline if "operator: stream.cancel" in row]
        check(cancel_rows and "ada (operator)" in cancel_rows[0] and "why: browser test: creator asked" in cancel_rows[0],
              "the timeline after the cancel shows the operator's action with who and why")
        check(driver.find_elements(By.CSS_SELECTOR, "table.timeline tr.now") and any("not eligible: not_ios" in row for row in timeline),
              "the timeline has its now row and every device's decision")
        screenshot(driver, "stream", scroll_to="table.timeline")

        # Search by a user's name and a stream's title.
        search = driver.find_element(By.ID, "q")
        navigate(driver, lambda: search.send_keys("selin", Keys.ENTER))
        check(h1(driver) == "User u1", "search by a user's name opens the user")
        search = driver.find_element(By.ID, "q")
        navigate(driver, lambda: search.send_keys("launch", Keys.ENTER))
        found = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "main table tbody tr")]
        check(h1(driver) == "Search" and any("s2" in row and "title" in row for row in found)
              and driver.find_element(By.ID, "q").get_attribute("value") == "launch",
              "search by a title lists the streams, the query kept in the box")
        screenshot(driver, "search")

        # A pause: the fleet page's banner says so, and a chart is drawn.
        driver.get(TRUSTED + "/pause?kind=reminder")
        check(h1(driver) == "Pause reminder jobs?", "the pause confirmation is for the chosen kind")
        driver.find_element(By.ID, "reason").send_keys("browser test: FCM incident")
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "form.action button[type=submit]").click)
        driver.get(TRUSTED + "/")
        banner = driver.find_element(By.CSS_SELECTOR, "section.verdict")
        check("paused" in banner.get_attribute("class") and "reminder paused by countdown-console (ada): browser test: FCM incident" in banner.text,
              "in a pause, the fleet page's banner says paused, by whom and why")
        check(driver.find_elements(By.CSS_SELECTOR, "figure.chart svg polyline")
              and "start ios: 1 pushes" in driver.find_element(By.CSS_SELECTOR, "section.charts").text,
              "a chart of the last hour is drawn from PostgreSQL's counts")
        screenshot(driver, "fleet", scroll_to="section.verdict")

        # A forged CSRF token: the form's hidden field changed in the page, then submitted.
        driver.get(TRUSTED + "/streams/s2/cancel")
        driver.execute_script("document.querySelector('input[name=csrf_token]').value = '1700000000.' + '0'.repeat(64)")
        driver.find_element(By.ID, "reason").send_keys("forged")
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "form.action button[type=submit]").click)
        check(h1(driver) == "Not allowed" and "csrf_token" in driver.page_source, "a forged CSRF token is refused")
        check(driver.find_elements(By.LINK_TEXT, "Back to the confirmation"), "the error page leads back to the confirmation")
        check(stream_status("s2") == "scheduled", "the forged request changed nothing")

        # A viewer sees no action and cannot act.
        sign_in(driver, VIEWER)
        driver.get(TRUSTED + "/streams/s2")
        check(not driver.find_elements(By.LINK_TEXT, "Cancel this stream…"), "a viewer sees no cancel link")
        driver.get(TRUSTED + "/streams/s2/cancel")
        check("Only operators may do this" in driver.page_source and not driver.find_elements(By.CSS_SELECTOR, "form.action"),
              "a viewer's confirmation page has no form")
        driver.get(TRUSTED + "/devices/d1")
        check("…FCMLAST8" in driver.page_source and "fcm-token-" not in driver.page_source, "a viewer sees tokens masked")

        # The other pages, each with its screenshot for docs/console.md.
        sign_in(driver, OPERATOR)
        for path, title, name in [("/devices/d1", "Device d1", "device"), ("/users/u1", "User u1", "user"),
                                  ("/streams?status=scheduled&starting=24h", "Streams", "streams"),
                                  ("/dead", "Dead letters", "dead"), ("/quarantine", "Quarantine", "quarantine"),
                                  ("/tokens?since=1h", "Token invalidations", "tokens"), ("/audit", "Audit", "audit")]:
            driver.get(TRUSTED + path)
            check(h1(driver) == title, f"{path} shows its page ({title})")
            screenshot(driver, name)
        driver.get(TRUSTED + "/streams?status=scheduled&starting=24h")
        check(driver.find_elements(By.CSS_SELECTOR, "main table a[href='/streams/s2']"),
              "the streams list links a stream starting within 24 h")

        # Proxy headers from an address the console does not trust.
        sign_in(driver, OPERATOR)
        driver.get(UNTRUSTED + "/")
        check(h1(driver) == "Not signed in", "proxy headers from an untrusted address are ignored (401 page)")
        driver.get(UNTRUSTED + "/streams/s2")
        check(h1(driver) == "Not signed in" and "Launch" not in driver.page_source, "no stream data for an untrusted address")
    finally:
        driver.quit()

    # The attack cases against the JSON routes.
    status, _, body = http("GET", f"{TRUSTED}/streams/s2/cancel", as_json(OPERATOR))
    token = json.loads(body)["csrfToken"]
    status, _, _ = http("POST", f"{TRUSTED}/streams/s2/cancel", as_json(VIEWER), {"csrf_token": token, "reason": "r"})
    check(status == 403, "JSON: a viewer's action is 403")
    status, ctype, body = http("POST", f"{TRUSTED}/streams/s2/cancel", as_json(OPERATOR), {"csrf_token": "1.forged", "reason": "r"})
    check(status == 403 and ctype.startswith("application/json") and json.loads(body)["error"] == "forbidden", "JSON: a forged CSRF token is 403")
    status, _, _ = http("POST", f"{TRUSTED}/streams/s2/cancel", as_json(OPERATOR), {"reason": "r"})
    check(status == 403, "JSON: a missing CSRF token is 403")
    status, _, _ = http("POST", f"{UNTRUSTED}/streams/s2/cancel", as_json(OPERATOR), {"csrf_token": token, "reason": "r"})
    check(status == 401, "JSON: proxy headers from an untrusted address are 401")
    status, _, _ = http("GET", f"{UNTRUSTED}/streams/s2", as_json(OPERATOR))
    check(status == 401, "JSON: reading from an untrusted address is 401")
    check(stream_status("s2") == "scheduled", "JSON: none of the refused requests changed anything")
    status, ctype, body = http("GET", f"{TRUSTED}/streams/xss1", as_json(VIEWER))
    check(status == 200 and ctype.startswith("application/json") and json.loads(body)["report"]["title"] == XSS_TITLE,
          "JSON: the XSS title is data in a JSON string, served as application/json")
    status, _, body = http("GET", f"{TRUSTED}/audit", as_json(OPERATOR))
    refused = [entry for entry in json.loads(body)["entries"] if entry["outcome"].startswith("refused")]
    check(len(refused) >= 4 and any(entry["actor"] == "vic" for entry in refused), "JSON: the refused actions are in the audit")
    print(f"console browser tests passed in {time.monotonic() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
