import AppShellFuzzTargets

// The `config` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    ConfigurationFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
