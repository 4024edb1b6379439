import AppShell
import AppShellDemo

/// `config.json` and the `APPSHELL_*` variables. An input beginning with `E` is a list of
/// variables, one `NAME=value` a line (`APPSHELL_` is put before a name without it); any other
/// input is the file's contents.
public enum ConfigurationFuzz {
    /// Either the configuration applies or a `ConfigurationError` of one line says why; applying
    /// the same input again gives the same outcome.
    public static func run(_ data: [UInt8]) {
        let first = outcome(data)
        let second = outcome(data)
        FuzzCheck.require(first == second, "the same input applied twice gave different outcomes")
        if case .failure(let error) = first {
            FuzzCheck.require(!error.description.isEmpty, "an empty configuration error")
            FuzzCheck.require(
                !error.description.contains(where: \.isNewline), "a configuration error of more than one line: \(error)"
            )
        }
    }

    private static func outcome(_ data: [UInt8]) -> Result<DemoConfiguration, ConfigurationError> {
        var configuration = DemoConfiguration()
        do {
            if data.first == UInt8(ascii: "E") {
                try configuration.apply(environment: environment(data.dropFirst()))
            } else {
                try configuration.apply(file: "config.json", contents: data)
            }
            return .success(configuration)
        } catch {
            return .failure(error)
        }
    }

    private static func environment(_ data: ArraySlice<UInt8>) -> [String: String] {
        var variables: [String: String] = [:]
        for line in FuzzCheck.lines(Array(data)) {
            // A variable's name and value are C strings: no NUL.
            let text = FuzzCheck.cString(line)
            guard let equals = text.firstIndex(of: "=") else { continue }
            var name = String(text[..<equals])
            if !name.hasPrefix("APPSHELL_") { name = "APPSHELL_" + name }
            variables[name] = String(text[text.index(after: equals)...])
        }
        return variables
    }
}
