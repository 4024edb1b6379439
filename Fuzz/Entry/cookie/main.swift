import AppShellFuzzTargets

// The `cookie` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    CookieFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
