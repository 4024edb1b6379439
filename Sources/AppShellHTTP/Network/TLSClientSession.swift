import CMicroHTTPD  // GnuTLS, which libmicrohttpd's module brings; no MHD_* call here
import Glibc

/// The client side of a TLS session over a connected socket (GnuTLS), for `appshell health` and
/// the tests' clients: it trusts the certificates of one CA file and checks the server's
/// certificate against `serverName` (an IP address literal is checked as one) — or, with no trust
/// file, checks nothing (the health probe asks whether a process answers, not who it is).
package final class TLSClientSession {
    private let session: OpaquePointer
    private let credentials: OpaquePointer
    /// The name the certificate is checked for: GnuTLS keeps the pointer for the session's life.
    private let expectedName: UnsafeMutablePointer<CChar>

    /// Shakes hands on `descriptor` (already connected) trusting `trustFile` (PEM; `nil`: trusting
    /// any certificate), with GnuTLS's default priorities or `priorities` (to offer only an old
    /// protocol, say). Throws when the handshake fails or the certificate is not trusted for
    /// `serverName`.
    package init(
        descriptor: Int32, trustFile: String?, serverName: String, priorities: String? = nil
    )
        throws(ClientConnectionError)
    {
        var credentials: OpaquePointer?
        guard gnutls_certificate_allocate_credentials(&credentials) == GNUTLS_E_SUCCESS, let credentials else {
            throw ClientConnectionError("GnuTLS could not allocate credentials")
        }
        var session: OpaquePointer?
        guard gnutls_init(&session, UInt32(GNUTLS_CLIENT)) == GNUTLS_E_SUCCESS, let session else {
            gnutls_certificate_free_credentials(credentials)
            throw ClientConnectionError("GnuTLS could not make a session")
        }
        self.session = session
        self.credentials = credentials
        expectedName = strdup(serverName)
        if let trustFile {
            guard gnutls_certificate_set_x509_trust_file(credentials, trustFile, GNUTLS_X509_FMT_PEM) > 0 else {
                throw ClientConnectionError("no certificate to trust in \(trustFile)")
            }
        }
        if let priorities {
            guard gnutls_priority_set_direct(session, priorities, nil) == GNUTLS_E_SUCCESS else {
                throw ClientConnectionError("GnuTLS refused the priorities \(priorities)")
            }
        } else {
            gnutls_set_default_priority(session)
        }
        gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials))
        // An IP address is not sent as a server name (RFC 6066), but is still checked.
        if inet_addr(serverName) == INADDR_NONE {
            gnutls_server_name_set(session, GNUTLS_NAME_DNS, serverName, serverName.utf8.count)
        }
        if trustFile != nil { gnutls_session_set_verify_cert(session, expectedName, 0) }
        // Offered as a browser does: HTTP/2 first, then HTTP/1.1 (the server must pick the latter).
        // Static text, which GnuTLS copies.
        let offered = [StaticString("h2"), StaticString("http/1.1")].map { name in
            gnutls_datum_t(data: UnsafeMutablePointer(mutating: name.utf8Start), size: UInt32(name.utf8CodeUnitCount))
        }
        _ = gnutls_alpn_set_protocols(session, offered, UInt32(offered.count), 0)
        gnutls_transport_set_int2(session, descriptor, descriptor)
        var status: Int32
        repeat { status = gnutls_handshake(session) } while status < 0 && gnutls_error_is_fatal(status) == 0
        guard status >= 0 else {
            var why = Self.message(status)
            if status == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR {
                var text = gnutls_datum_t()
                let verdict = gnutls_session_get_verify_cert_status(session)
                if gnutls_certificate_verification_status_print(verdict, GNUTLS_CRT_X509, &text, 0) == 0,
                    let data = text.data
                {
                    why += ": " + String(cString: UnsafeRawPointer(data).assumingMemoryBound(to: CChar.self))
                    appshell_gnutls_free(data)
                }
            }
            throw ClientConnectionError("TLS handshake failed: \(why)")
        }
    }

    deinit {
        gnutls_deinit(session)
        gnutls_certificate_free_credentials(credentials)
        free(expectedName)
    }

    /// Sends up to `count` bytes from `bytes`; the number sent, or a negative GnuTLS error.
    package func send(_ bytes: UnsafeRawPointer, count: Int) -> Int {
        while true {
            let sent = gnutls_record_send(session, bytes, count)
            if sent == GNUTLS_E_INTERRUPTED { continue }
            return sent
        }
    }

    /// Receives up to `count` bytes into `bytes`: their number, 0 at the end of the stream, or
    /// throws (a read that timed out, a fatal TLS error).
    package func receive(into bytes: UnsafeMutableRawPointer, count: Int) throws(ClientConnectionError) -> Int {
        while true {
            let received = gnutls_record_recv(session, bytes, count)
            if received >= 0 { return received }
            switch Int32(received) {
            case GNUTLS_E_INTERRUPTED: continue
            case GNUTLS_E_AGAIN: throw ClientConnectionError("read timed out")
            // The server closed without a close_notify (it does, after `Connection: close`).
            case GNUTLS_E_PREMATURE_TERMINATION: return 0
            // Reset (the server closed with a request unread): the end, as for plain HTTP.
            case GNUTLS_E_PULL_ERROR where errno == ECONNRESET: return 0
            default: throw ClientConnectionError("TLS read failed: \(Self.message(Int32(received)))")
            }
        }
    }

    /// The protocol agreed (`TLS1.3`).
    package var protocolName: String {
        gnutls_protocol_get_name(gnutls_protocol_get_version(session)).map { String(cString: $0) } ?? ""
    }

    /// The ALPN protocol agreed, if any.
    package var applicationProtocol: String? {
        var datum = gnutls_datum_t()
        guard gnutls_alpn_get_selected_protocol(session, &datum) == GNUTLS_E_SUCCESS, let data = datum.data else {
            return nil
        }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(datum.size)), as: UTF8.self)
    }

    /// The serial number (hex) of the certificate the server presented.
    package var peerSerialNumber: String? {
        var count: UInt32 = 0
        guard let peers = gnutls_certificate_get_peers(session, &count), count > 0 else { return nil }
        var certificate: gnutls_x509_crt_t?
        guard gnutls_x509_crt_init(&certificate) == GNUTLS_E_SUCCESS, let certificate else { return nil }
        defer { gnutls_x509_crt_deinit(certificate) }
        var first = peers[0]
        guard gnutls_x509_crt_import(certificate, &first, GNUTLS_X509_FMT_DER) == GNUTLS_E_SUCCESS else { return nil }
        var serial = [UInt8](repeating: 0, count: 64)
        var size = serial.count
        guard gnutls_x509_crt_get_serial(certificate, &serial, &size) == GNUTLS_E_SUCCESS else { return nil }
        return TLSIdentity.hex(serial[0..<size])
    }

    private static func message(_ status: Int32) -> String {
        gnutls_strerror(status).map { String(cString: $0) } ?? "error \(status)"
    }
}
