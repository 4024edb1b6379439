import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// `appshell` serving HTTPS itself (issue 32): a bad pair stops the start with one line naming the
/// setting; a good one serves with `Secure` cookies and HSTS, SIGHUP loads a renewed pair, and the
/// redirect port sends plain HTTP there.
@Suite struct HTTPSCommandTests {
    static let base = ["APPSHELL_PORT": "0", "APPSHELL_STORE": "memory", "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0"]

    @Test func aPairThatCannotBeUsedExitsWithStatus2NamingTheSetting() throws {
        let directory = try TemporaryDirectory("https-command")
        defer { directory.remove() }
        let certificate = try TestCertificate.make(in: directory)
        let other = try TestCertificate.make(in: directory, name: "other")
        let cases: [([String: String], String)] = [
            (
                ["APPSHELL_TLS_CERTIFICATE_PATH": certificate.certificatePath],
                #""tlsKeyPath" must be set with "tlsCertificatePath" (HTTPS needs both)"#
            ),
            (
                ["APPSHELL_TLS_KEY_PATH": certificate.keyPath],
                #""tlsCertificatePath" must be set with "tlsKeyPath" (HTTPS needs both)"#
            ),
            (
                ["APPSHELL_TLS_CERTIFICATE_PATH": certificate.certificatePath, "APPSHELL_TLS_KEY_PATH": other.keyPath],
                #""tlsKeyPath": the key in \#(other.keyPath) is not the key of the certificate in \#(certificate.certificatePath)"#
            ),
            (
                [
                    "APPSHELL_TLS_CERTIFICATE_PATH": directory.path("missing.pem"),
                    "APPSHELL_TLS_KEY_PATH": certificate.keyPath,
                ],
                #""tlsCertificatePath": the certificate \#(directory.path("missing.pem")) cannot be read: No such file or directory"#
            ),
            (
                ["APPSHELL_HTTP_REDIRECT_PORT": "8081"],
                #""httpRedirectPort" needs HTTPS ("tlsCertificatePath" and "tlsKeyPath"): it redirects there"#
            ),
        ]
        for (environment, expected) in cases {
            let running = try CommandTests.run(environment: Self.base.merging(environment) { $1 })
            #expect(running.waitForExit() == 2)
            #expect(running.errorText == "appshell: configuration error: \(expected)\n")
        }
    }

    /// `appshell health`: 0 when the configured server answers `/healthz`, 1 and one line when
    /// nothing does (plain HTTP here; over TLS in the test below).
    @Test func healthAsksTheConfiguredServer() throws {
        let running = try CommandTests.run(environment: Self.base)
        let port = try running.port()
        let healthy = try CommandTests.run(
            ["health"], environment: Self.base.merging(["APPSHELL_PORT": String(port)]) { $1 })
        #expect(healthy.waitForExit() == 0)
        let free = try Self.freePort()
        let nobody = try CommandTests.run(
            ["health"], environment: Self.base.merging(["APPSHELL_PORT": String(free)]) { $1 })
        #expect(nobody.waitForExit() == 1)
        #expect(nobody.errorText.hasPrefix("appshell: unhealthy: nothing answers on 127.0.0.1:\(free)"))
        running.terminate()
        #expect(running.waitForExit() == 0)
    }

    /// A free loopback port: one a server was given and gave back.
    static func freePort() throws -> Int {
        let live = try LiveServer(responder: Router())
        defer { live.stop(timeoutSeconds: 0) }
        return live.port
    }

    @Test func servesHTTPSReloadsOnSIGHUPOrChangedFilesAndRedirectsPlainHTTP() throws {
        let directory = try TemporaryDirectory("https-command")
        defer { directory.remove() }
        let first = try TestCertificate.make(in: directory, name: "first")
        let second = try TestCertificate.make(in: directory, name: "second")
        let served = (directory.path("served.pem"), directory.path("served.key"))
        try FileManager.default.copyItem(atPath: first.certificatePath, toPath: served.0)
        try FileManager.default.copyItem(atPath: first.keyPath, toPath: served.1)
        let trust = directory.path("trust.pem")
        try
            (String(contentsOfFile: first.certificatePath, encoding: .utf8)
            + String(contentsOfFile: second.certificatePath, encoding: .utf8)).write(
                toFile: trust, atomically: true, encoding: .utf8)
        let redirectPort = try Self.freePort()
        let running = try CommandTests.run(
            environment: Self.base.merging([
                "APPSHELL_TLS_CERTIFICATE_PATH": served.0, "APPSHELL_TLS_KEY_PATH": served.1,
                "APPSHELL_HTTP_REDIRECT_PORT": String(redirectPort),
            ]) { $1 })
        let port = try running.port()
        let client = TestClient(port: port, tls: TestTLS(trustFile: trust))
        let state = try client.get("/api/state")
        #expect(state.status == 200)
        #expect(state.headers["Strict-Transport-Security"] == "max-age=63072000")
        let cookie = try #require(state.headers["Set-Cookie"])
        #expect(cookie.hasPrefix("__Host-appshell_session=") && cookie.contains("; Secure"))
        #expect(client.peerSerialNumber == first.serialNumber)
        // The image's health check: `appshell health` with the same settings asks over TLS.
        let probe = try CommandTests.run(
            ["health"],
            environment: Self.base.merging([
                "APPSHELL_TLS_CERTIFICATE_PATH": served.0, "APPSHELL_TLS_KEY_PATH": served.1,
                "APPSHELL_PORT": String(port),
            ]) { $1 })
        #expect(probe.waitForExit() == 0)

        // Plain HTTP on the redirect port: 301 to the same URL over HTTPS.
        let plain = try TestClient(port: redirectPort).get(
            "/main/list?x=1", headers: [("Host", "localhost:\(redirectPort)")])
        #expect(plain.status == 301)
        #expect(plain.headers["Location"] == "https://localhost:\(port)/main/list?x=1")

        // Renewed: SIGHUP, and new connections get the new certificate; the kept-alive one goes on.
        try FileManager.default.removeItem(atPath: served.0)
        try FileManager.default.removeItem(atPath: served.1)
        try FileManager.default.copyItem(atPath: second.certificatePath, toPath: served.0)
        try FileManager.default.copyItem(atPath: second.keyPath, toPath: served.1)
        kill(running.process.processIdentifier, SIGHUP)
        /// The serial number new connections see, once it is `serial` (or the last one seen after 60 s).
        func serialServed(once serial: String) throws -> String? {
            var seen: String?
            for _ in 0..<600 {
                let fresh = TestClient(port: port, tls: TestTLS(trustFile: trust))
                _ = try fresh.get("/healthz")
                seen = fresh.peerSerialNumber
                if seen == serial { break }
                usleep(100_000)
            }
            return seen
        }
        #expect(try serialServed(once: second.serialNumber) == second.serialNumber)
        #expect(try client.get("/api/state").status == 200)
        #expect(client.peerSerialNumber == first.serialNumber)

        // Renewed again, without a signal: the files' change is noticed within seconds.
        for (from, to) in [(first.certificatePath, served.0), (first.keyPath, served.1)] {
            try FileManager.default.removeItem(atPath: to)
            try FileManager.default.copyItem(atPath: from, toPath: to)
        }
        #expect(try serialServed(once: first.serialNumber) == first.serialNumber)
        running.terminate()
        #expect(running.waitForExit() == 0)
        let output = running.outputText
        #expect(output.contains(#""cause":"SIGHUP","certificateSerialNumber":"\#(second.serialNumber)""#))
        #expect(output.contains(#""cause":"the files changed","certificateSerialNumber":"\#(first.serialNumber)""#))
    }
}
