"""Headless Chromium through Selenium, for the page checks of .ci/run (check-plan-html.py,
check-inspector.py). Installs Debian's chromium and chromium-driver (apt-get) and PyPI's
selenium when they are missing.
"""
import shutil
import subprocess
import sys

if not (shutil.which("chromium") and shutil.which("chromedriver")):
    # A fresh machine has no package lists yet: without them the install finds nothing.
    subprocess.check_call(["apt-get", "update", "-qq"])
    subprocess.check_call(["apt-get", "install", "-y", "-qq", "chromium", "chromium-driver"])
try:
    from selenium import webdriver
except ImportError:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "selenium"])
    from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def start(width, height):
    """A headless Chromium window of `width` × `height` pixels."""
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}"]:
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
