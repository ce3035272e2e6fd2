"""Spins the CPU for ever."""

print("spinning", flush=True)
count = 0
while True:
    count += 1
