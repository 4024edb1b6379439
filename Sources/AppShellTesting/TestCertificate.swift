import Foundation

/// A self-signed certificate and its key, made by Debian's `openssl` for a test: valid for
/// `localhost`, `127.0.0.1` and the names asked for, its own CA (a client trusts its file).
public struct TestCertificate: Sendable {
    /// The PEM certificate.
    public let certificatePath: String
    /// The PEM private key (unencrypted).
    public let keyPath: String
    /// Its serial number, in hex as `TLSIdentity.serialNumber` writes it.
    public let serialNumber: String

    /// Makes `<name>.pem` and `<name>.key` in `directory`: an ECDSA P-256 (or RSA 2048) key and
    /// a certificate valid from now for `days` (at least 1) for `localhost`, `127.0.0.1` and
    /// `names`.
    public static func make(
        in directory: TemporaryDirectory, name: String = "server", names: [String] = [], days: Int = 30,
        rsa: Bool = false
    ) throws -> TestCertificate {
        let certificate = directory.path(name + ".pem")
        let key = directory.path(name + ".key")
        let alternatives = (["DNS:localhost", "IP:127.0.0.1"] + names.map { "DNS:" + $0 }).joined(separator: ",")
        var arguments = ["req", "-x509", "-nodes", "-keyout", key, "-out", certificate, "-subj", "/CN=AppShell test"]
        arguments += ["-addext", "subjectAltName=" + alternatives]
        arguments += rsa ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        arguments += ["-days", String(max(1, days))]
        try run(arguments)
        let serial = try run(["x509", "-in", certificate, "-noout", "-serial"])
        return TestCertificate(
            certificatePath: certificate, keyPath: key,
            serialNumber: serial.replacingOccurrences(of: "serial=", with: "").trimmingCharacters(
                in: .whitespacesAndNewlines
            )
            .lowercased())
    }

    /// Runs `openssl` with `arguments`; its standard output, or throws with its standard error.
    @discardableResult
    private static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestClientError(
                description: "openssl \(arguments.first ?? "") failed: " + String(decoding: complaint, as: UTF8.self))
        }
        return String(decoding: printed, as: UTF8.self)
    }
}
