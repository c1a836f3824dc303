"""The HTML report in a real browser: Selenium driving the system's headless chromium and its
chromedriver (no download); without them the test is skipped, with its reason."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

VIEWS = ("table", "pareto", "parallel", "ranking", "why")


def browser(tmp_path: Path):
    """Selenium driving the system's headless chromium through its chromedriver (no download)."""
    chromium = next(
        (
            shutil.which(n)
            for n in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(n)
        ),
        None,
    )
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--enable-unsafe-swiftshader",
        "--window-size=1400,1000",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        f"--user-data-dir={tmp_path}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=options)


def console_errors(driver) -> list[str]:
    """The browser console's errors so far."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def assert_screenshot(png: bytes) -> None:
    """A screenshot with something drawn on it."""
    with Image.open(io.BytesIO(png)) as image:
        pixels = np.asarray(image.convert("RGB"))
    assert pixels.shape[0] > 300 and pixels.shape[1] > 300
    assert 0.01 < np.any(pixels < 235, axis=2).mean() < 0.95  # something drawn, not all ink


def open_report(driver, page: Path):
    """Load a report page and wait for its table."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.resolve().as_uri())
    WebDriverWait(driver, 30).until(
        lambda d: d.find_elements("css selector", "#results-table tbody tr")
    )


def check_views(driver, shots: Path, name: str) -> None:
    """Every view opens without error and draws something."""
    from selenium.webdriver.support.ui import WebDriverWait

    for view in VIEWS:
        driver.find_element("id", f"tab-{view}").click()
        section = driver.find_element("id", f"view-{view}")
        if view in ("pareto", "parallel"):
            WebDriverWait(driver, 30).until(
                lambda d, section=section: section.find_elements("css selector", ".main-svg")
            )
        png = driver.get_screenshot_as_png()
        (shots / f"{name}_{view}.png").write_bytes(png)
        assert_screenshot(png)
    assert not console_errors(driver)
