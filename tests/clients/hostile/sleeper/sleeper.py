"""Joins nothing and sleeps for ever."""

import time

print("sleeping", flush=True)
while True:
    time.sleep(3600)
