import AppShellConcurrency
import AppShellTesting
import Foundation
import Glibc
import Testing

@testable import AppShellHTTP

/// HTTPS served by libmicrohttpd's GnuTLS (issue 32): TLS 1.2 and 1.3 only, ALPN, HSTS, a
/// certificate reloaded without dropping open connections, and what a client that does not speak
/// TLS gets. Each test makes its own self-signed certificate with `openssl`.
@Suite struct TLSTests {
    /// An HTTPS server with `certificate` whose `/events` opens a stream and hands it to the test.
    static func start(
        _ certificate: TestCertificate, _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws -> (LiveServer, Locked<[EventStream]>) {
        try start(certificatePath: certificate.certificatePath, keyPath: certificate.keyPath, configure)
    }

    static func start(
        certificatePath: String, keyPath: String, _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws -> (LiveServer, Locked<[EventStream]>) {
        let opened = Locked<[EventStream]>([])
        var router = Router()
        router.get("/ok") { _ in .text("ok") }
        router.get("/events") { _ in
            let stream = EventStream()
            opened.withLock { $0.append(stream) }
            return .events(stream)
        }
        var configuration = LiveServer.testConfiguration
        configuration.tls = HTTPServerConfiguration.TLSFiles(certificatePath: certificatePath, keyPath: keyPath)
        configure(&configuration)
        return (try LiveServer(configuration: configuration, responder: router), opened)
    }

    @Test func answersOverTLSWithStrictTransportSecurityAndALPN() throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let certificate = try TestCertificate.make(in: directory)
        let (live, _) = try Self.start(certificate)
        #expect(live.server.certificateSerialNumber == certificate.serialNumber)
        let client = TestClient(port: live.port, tls: TestTLS(trustFile: certificate.certificatePath))
        let answer = try client.get("/ok")
        #expect(answer.status == 200)
        #expect(answer.text == "ok")
        #expect(answer.headers["Strict-Transport-Security"] == "max-age=63072000")
        #expect(client.negotiated?.protocolName == "TLS1.3")
        #expect(client.negotiated?.applicationProtocol == "http/1.1")
        #expect(client.peerSerialNumber == certificate.serialNumber)
        // Checked for a name too (SNI), and over TLS 1.2.
        let named = TestClient(
            port: live.port,
            tls: TestTLS(
                trustFile: certificate.certificatePath, serverName: "localhost",
                priorities: "NORMAL:-VERS-ALL:+VERS-TLS1.2"))
        #expect(try named.get("/ok", headers: [("Host", "localhost")]).status == 200)
        #expect(named.negotiated?.protocolName == "TLS1.2")
    }

    @Test func strictTransportSecurityCanBeTurnedOff() throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let certificate = try TestCertificate.make(in: directory)
        let (live, _) = try Self.start(certificate) { $0.strictTransportSecuritySeconds = 0 }
        let answer = try TestClient(port: live.port, tls: TestTLS(trustFile: certificate.certificatePath)).get("/ok")
        #expect(answer.status == 200)
        #expect(answer.headers["Strict-Transport-Security"] == nil)
    }

    /// TLS 1.1 and 1.0 and CBC ciphers are refused: the handshake fails.
    @Test(arguments: [
        "NORMAL:-VERS-ALL:+VERS-TLS1.1", "NORMAL:-VERS-ALL:+VERS-TLS1.0",
        "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-CBC:-MAC-ALL:+SHA1",
    ])
    func oldProtocolsAndCiphersAreRefused(priorities: String) throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let certificate = try TestCertificate.make(in: directory)
        let (live, _) = try Self.start(certificate)
        let client = TestClient(
            port: live.port, tls: TestTLS(trustFile: certificate.certificatePath, priorities: priorities))
        #expect(throws: TestClientError.self) { try client.get("/ok") }
        // The server goes on.
        #expect(
            try TestClient(port: live.port, tls: TestTLS(trustFile: certificate.certificatePath)).get("/ok").status
                == 200)
    }

    /// Plain HTTP, or garbage where a ClientHello belongs, is closed at once: no answer, and no
    /// wait for the idle timeout (the reads would time out after 10 s).
    @Test(arguments: [
        "GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n", "\u{16}\u{03}\u{01}\u{00}\u{05}garbage and more garbage",
    ])
    func aClientThatDoesNotSpeakTLSIsClosed(bytes: String) throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let certificate = try TestCertificate.make(in: directory)
        let (live, _) = try Self.start(certificate)
        let connection = try RawConnection(port: live.port, timeoutSeconds: 10)
        let answer = try connection.finish(bytes)
        #expect(!answer.contains("HTTP/1.1"))
        #expect(
            try TestClient(port: live.port, tls: TestTLS(trustFile: certificate.certificatePath)).get("/ok").status
                == 200)
    }

    /// Fails on the code before (a stalled handshake was held for the 30 s idle timeout, and
    /// these reads time out after 10): a client that starts a handshake and stops, or sends
    /// nothing, is closed after `handshakeTimeoutSeconds`, and others are served meanwhile.
    @Test func aStalledHandshakeIsClosedAfterTheHandshakeTimeout() throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let certificate = try TestCertificate.make(in: directory)
        let (live, _) = try Self.start(certificate) { $0.handshakeTimeoutSeconds = 1 }
        let silent = try RawConnection(port: live.port, timeoutSeconds: 10)
        let stalled = try RawConnection(port: live.port, timeoutSeconds: 10)
        // The first bytes of a ClientHello record, and no more.
        try stalled.send("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}")
        #expect(
            try TestClient(port: live.port, tls: TestTLS(trustFile: certificate.certificatePath)).get("/ok").status
                == 200)
        #expect(try silent.readToEnd() == "")
        _ = try stalled.readToEnd()
        var metrics = PrometheusText()
        live.server.statistics.writeMetrics(into: &metrics)
        #expect(metrics.text.contains(#"appshell_http_idle_connections_closed_total{reason="handshake_timeout"} 2"#))
    }

    /// Fails on the code before (P-256 first: every OpenSSL client, as browsers, offered an X25519
    /// key share and was asked again, a HelloRetryRequest, one more round trip): the server takes
    /// the X25519 share it is offered, as Mozilla's profile orders the groups.
    @Test func aClientOfferingX25519GetsNoHelloRetryRequest() throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let certificate = try TestCertificate.make(in: directory)
        let (live, _) = try Self.start(certificate)
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["s_client", "-connect", "127.0.0.1:\(live.port)", "-tls1_3", "-trace"]
        let output = Pipe()
        openssl.standardOutput = output
        openssl.standardError = FileHandle.nullDevice
        openssl.standardInput = FileHandle.nullDevice
        try openssl.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        openssl.waitUntilExit()
        #expect(text.contains("Server Temp Key: X25519"))
        // A HelloRetryRequest names the group it wants in a key share of two bytes.
        #expect(!text.contains("extension_type=key_share(51), length=2\n"))
    }

    /// Fails on the code before (the loop took 20 000 turns a second, a core's worth): a TLS
    /// connection whose handshake waits for its client — one that sends nothing, one that sends
    /// half a ClientHello — keeps libmicrohttpd 0.9.75 asking for a zero wait; the loop waits for
    /// an event instead, and others are still served at once.
    @Test func aWaitingHandshakeDoesNotSpinTheEventLoop() throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let certificate = try TestCertificate.make(in: directory)
        let (live, _) = try Self.start(certificate) { $0.threads = 1 }
        let silent = try RawConnection(port: live.port, timeoutSeconds: 30)
        let stalled = try RawConnection(port: live.port, timeoutSeconds: 30)
        try stalled.send("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}")
        let client = TestClient(port: live.port, tls: TestTLS(trustFile: certificate.certificatePath))
        #expect(try client.get("/ok").status == 200)
        // Watched for half a second (not waited on: the handshakes never finish): a waiting loop
        // wakes at most every 5 ms, about 100 turns; a spinning one thousands.
        let before = live.server.eventLoopTurns
        usleep(500_000)
        let turns = live.server.eventLoopTurns - before
        #expect(turns < 400, "the event loop took \(turns) turns in half a second")
        #expect(try client.get("/ok").status == 200)
        withExtendedLifetime((silent, stalled)) {}
    }

    /// Fails on the code before (no reload): new connections get the new certificate, and a
    /// connection open before — an event stream — keeps its own and goes on receiving.
    @Test func aReloadedCertificateIsGivenToNewConnectionsOnly() throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let first = try TestCertificate.make(in: directory, name: "first")
        let second = try TestCertificate.make(in: directory, name: "second", rsa: true)
        // The server reads the files of `first`, replaced later by those of `second`.
        let served = try TestCertificate.make(in: directory, name: "served")
        try FileManager.default.removeItem(atPath: served.certificatePath)
        try FileManager.default.removeItem(atPath: served.keyPath)
        try FileManager.default.copyItem(atPath: first.certificatePath, toPath: served.certificatePath)
        try FileManager.default.copyItem(atPath: first.keyPath, toPath: served.keyPath)
        let (live, opened) = try Self.start(served)
        // A bundle of both: the client trusts either.
        let trust = directory.path("trust.pem")
        try
            (String(contentsOfFile: first.certificatePath, encoding: .utf8)
            + String(contentsOfFile: second.certificatePath, encoding: .utf8)).write(
                toFile: trust, atomically: true, encoding: .utf8)
        let stream = try RawConnection(port: live.port, tls: TestTLS(trustFile: trust))
        try stream.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try stream.read(through: "\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(stream.peerSerialNumber == first.serialNumber)
        #expect(eventually { opened.withLock { $0.count } == 1 })

        // Unchanged files: nothing to do.
        #expect(live.server.reloadCertificate() == .unchanged)
        // A certificate without its key: refused, the pair in use stays.
        try FileManager.default.removeItem(atPath: served.certificatePath)
        try FileManager.default.copyItem(atPath: second.certificatePath, toPath: served.certificatePath)
        guard case .failed(let reason) = live.server.reloadCertificate() else {
            Issue.record("a certificate without its key was loaded")
            return
        }
        #expect(reason.contains("\"tlsKeyPath\"") && reason.contains("is not the key of the certificate"))
        #expect(live.server.certificateSerialNumber == first.serialNumber)
        #expect(
            TestClient(port: live.port, tls: TestTLS(trustFile: trust)).peerSerialNumber == nil
                && (try? TestClient(port: live.port, tls: TestTLS(trustFile: first.certificatePath)).get("/ok"))?.status
                    == 200
        )

        // Both files: new connections get the new pair.
        try FileManager.default.removeItem(atPath: served.keyPath)
        try FileManager.default.copyItem(atPath: second.keyPath, toPath: served.keyPath)
        #expect(live.server.reloadCertificate() == .loaded(serialNumber: second.serialNumber))
        let client = TestClient(port: live.port, tls: TestTLS(trustFile: trust))
        #expect(try client.get("/ok").status == 200)
        #expect(client.peerSerialNumber == second.serialNumber)

        // The stream opened before goes on, with its own certificate.
        let event = try #require(opened.withLock { $0.first })
        event.send(data: "after the reload")
        #expect(try stream.read(through: "after the reload\n\n").contains("data: after the reload"))
        #expect(stream.peerSerialNumber == first.serialNumber)
        event.close()
    }

    /// Fails on the code before (only SIGHUP reloaded): a renewal that swaps the links the server's
    /// paths are (certbot's `live/` files) is loaded once both files have settled — not while only
    /// the certificate is new — and a pair that cannot be used is reported once, not at every look.
    @Test func renewedFilesAreLoadedOnceBothHaveSettled() throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let first = try TestCertificate.make(in: directory, name: "first")
        let second = try TestCertificate.make(in: directory, name: "second")
        let certificateLink = directory.path("cert.pem")
        let keyLink = directory.path("key.pem")
        /// Points `link` at `target` the way certbot does: a new link renamed over the old one.
        func point(_ link: String, at target: String) throws {
            try? FileManager.default.removeItem(atPath: link + ".new")
            try FileManager.default.createSymbolicLink(atPath: link + ".new", withDestinationPath: target)
            #expect(rename(link + ".new", link) == 0)
        }
        try point(certificateLink, at: first.certificatePath)
        try point(keyLink, at: first.keyPath)
        let (live, _) = try Self.start(certificatePath: certificateLink, keyPath: keyLink)
        #expect(live.server.reloadCertificateIfFilesChanged() == nil)

        // The certificate is renewed first, its key a moment later: nothing is read in between.
        try point(certificateLink, at: second.certificatePath)
        #expect(live.server.reloadCertificateIfFilesChanged() == nil)
        try point(keyLink, at: second.keyPath)
        #expect(live.server.reloadCertificateIfFilesChanged() == nil)
        #expect(live.server.certificateSerialNumber == first.serialNumber)
        // Settled: loaded, once.
        #expect(live.server.reloadCertificateIfFilesChanged() == .loaded(serialNumber: second.serialNumber))
        #expect(live.server.reloadCertificateIfFilesChanged() == nil)
        let client = TestClient(port: live.port, tls: TestTLS(trustFile: second.certificatePath))
        #expect(try client.get("/ok").status == 200)
        #expect(client.peerSerialNumber == second.serialNumber)

        // A certificate left without its key: said once, and the pair in use stays.
        try point(certificateLink, at: first.certificatePath)
        #expect(live.server.reloadCertificateIfFilesChanged() == nil)
        guard case .failed(let reason) = live.server.reloadCertificateIfFilesChanged() else {
            Issue.record("a certificate without its key was loaded")
            return
        }
        #expect(reason.contains("is not the key of the certificate"))
        #expect(live.server.reloadCertificateIfFilesChanged() == nil)
        #expect(live.server.certificateSerialNumber == second.serialNumber)
    }

    /// Each file the server cannot use is named, with the reason.
    @Test func aPairThatCannotBeUsedIsRefusedNamingTheSetting() throws {
        let directory = try TemporaryDirectory("tls")
        defer { directory.remove() }
        let certificate = try TestCertificate.make(in: directory)
        let other = try TestCertificate.make(in: directory, name: "other")
        let now = Int64(time(nil))
        func failure(
            _ certificatePath: String, _ keyPath: String, now: Int64 = Int64(time(nil))
        ) -> TLSIdentity.Failure? {
            do {
                _ = try TLSIdentity.load(certificatePath: certificatePath, keyPath: keyPath, now: now)
                return nil
            } catch {
                return error
            }
        }
        #expect(failure(certificate.certificatePath, certificate.keyPath) == nil)
        let missing = failure(directory.path("missing.pem"), certificate.keyPath)
        #expect(missing?.setting == "tlsCertificatePath")
        #expect(missing?.reason.contains("cannot be read: No such file or directory") == true)
        #expect(failure(certificate.certificatePath, directory.path("missing.key"))?.setting == "tlsKeyPath")
        // The key where the certificate belongs, and the other way round.
        #expect(failure(certificate.keyPath, certificate.keyPath)?.reason.contains("holds no PEM certificate") == true)
        let notAKey = failure(certificate.certificatePath, certificate.certificatePath)
        #expect(notAKey?.setting == "tlsKeyPath")
        #expect(notAKey?.reason.contains("holds no unencrypted PEM private key") == true)
        let mismatch = failure(certificate.certificatePath, other.keyPath)
        #expect(mismatch?.setting == "tlsKeyPath")
        #expect(mismatch?.reason.contains("is not the key of the certificate") == true)
        // Expired (seen 31 days from now) and not valid yet (seen a day ago).
        let expired = failure(certificate.certificatePath, certificate.keyPath, now: now + 31 * 86_400)
        #expect(expired?.setting == "tlsCertificatePath")
        #expect(expired?.reason.contains("expired on") == true)
        #expect(
            failure(certificate.certificatePath, certificate.keyPath, now: now - 86_400)?.reason.contains(
                "is not valid before") == true)
        #expect(
            expired?.description.hasPrefix("\"tlsCertificatePath\": the certificate in \(certificate.certificatePath)")
                == true)
    }
}

/// The plain-HTTP port beside an HTTPS server (`httpRedirectPort`): 301 to the same URL over HTTPS.
@Suite struct HTTPSRedirectTests {
    @Test func everyRequestButHealthIsSentToHTTPS() throws {
        let live = try LiveServer(responder: HTTPSRedirect(httpsPort: 8443))
        let client = live.client()
        let page = try client.get("/main/list?tab=2", headers: [("Host", "localhost:8080")])
        #expect(page.status == 301)
        #expect(page.headers["Location"] == "https://localhost:8443/main/list?tab=2")
        #expect(page.headers["Cache-Control"] == "no-store")
        // An IPv6 literal keeps its brackets; a POST's body is not read.
        let posted = try client.postJSON("/api/actions", #"{"action": "x"}"#, headers: [("Host", "[::1]:80")])
        #expect(posted.status == 301)
        #expect(posted.headers["Location"] == "https://[::1]:8443/api/actions")
        #expect(try client.get("/healthz").status == 200)
        // A host the server does not serve is refused before any redirect (421), never sent on.
        #expect(try client.get("/", headers: [("Host", "evil.example")]).status == 421)
    }

    @Test func port443IsLeftOutOfTheURL() throws {
        let live = try LiveServer(responder: HTTPSRedirect(httpsPort: 443))
        let answer = try live.client().get("/", headers: [("Host", "127.0.0.1")])
        #expect(answer.headers["Location"] == "https://127.0.0.1/")
    }
}
