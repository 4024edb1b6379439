import CMicroHTTPD
import Glibc

/// A certificate chain and its private key, read from PEM files and checked before the server
/// uses them: both parse, the key is the certificate's, and the certificate is valid now. What
/// libmicrohttpd starts its daemons with (the PEM text) and what a reload hands to new connections
/// (GnuTLS credentials made from the same text) come from one load.
package final class TLSIdentity: @unchecked Sendable {
    // @unchecked: nothing changes after `init`; GnuTLS reads credentials from any thread.

    /// Why a certificate or key cannot be used: the setting it came from and the reason, one line.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The configuration key of the file at fault: `tlsCertificatePath` or `tlsKeyPath`.
        package let setting: String
        /// What is wrong with it, naming the file.
        package let reason: String

        /// `"<setting>": <reason>`.
        package var description: String { "\"\(setting)\": \(reason)" }
    }

    /// The setting names a failure reports.
    package static let certificateSetting = "tlsCertificatePath"
    /// The setting names a failure reports.
    package static let keySetting = "tlsKeyPath"

    /// The certificate file's text (the server's certificate first, then its chain), NUL-terminated.
    let certificatePEM: [CChar]
    /// The key file's text, NUL-terminated.
    let keyPEM: [CChar]
    /// The certificate and key as GnuTLS credentials, for connections that begin after a reload.
    let credentials: OpaquePointer
    /// The server certificate's serial number, in hex (`0a1b…`).
    package let serialNumber: String
    /// When the server certificate expires, in seconds since 1970.
    package let notAfter: Int64

    private init(
        certificatePEM: [CChar], keyPEM: [CChar], credentials: OpaquePointer, serialNumber: String, notAfter: Int64
    ) {
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
        self.credentials = credentials
        self.serialNumber = serialNumber
        self.notAfter = notAfter
    }

    deinit { gnutls_certificate_free_credentials(credentials) }

    /// Whether `other` holds the same files' contents.
    func hasSameFiles(as other: TLSIdentity) -> Bool {
        certificatePEM == other.certificatePEM && keyPEM == other.keyPEM
    }

    /// Loads the PEM certificate chain at `certificatePath` and the PEM private key at `keyPath`
    /// and checks them at `now` (seconds since 1970); throws a `Failure` naming the setting at
    /// fault: a file that cannot be read, is not PEM, a key that is not the certificate's, a
    /// certificate expired or not valid yet.
    package static func load(
        certificatePath: String, keyPath: String, now: Int64 = Int64(time(nil))
    ) throws(Failure) -> TLSIdentity {
        let certificateText = try read(certificatePath, setting: certificateSetting, what: "certificate")
        let keyText = try read(keyPath, setting: keySetting, what: "private key")
        let (serial, notBefore, notAfter) = try inspectCertificate(certificateText, path: certificatePath)
        if notAfter <= now {
            throw Failure(
                setting: certificateSetting,
                reason: "the certificate in \(certificatePath) expired on \(HTTPDate.format(seconds: Int(notAfter)))")
        }
        if notBefore > now {
            throw Failure(
                setting: certificateSetting,
                reason:
                    "the certificate in \(certificatePath) is not valid before \(HTTPDate.format(seconds: Int(notBefore)))"
            )
        }
        try checkKey(keyText, path: keyPath)
        var credentials: OpaquePointer?
        guard gnutls_certificate_allocate_credentials(&credentials) == GNUTLS_E_SUCCESS, let credentials else {
            throw Failure(setting: certificateSetting, reason: "GnuTLS could not allocate credentials")
        }
        let status = withDatum(certificateText) { certificate in
            withDatum(keyText) { key in
                gnutls_certificate_set_x509_key_mem2(credentials, &certificate, &key, GNUTLS_X509_FMT_PEM, nil, 0)
            }
        }
        guard status >= 0 else {
            gnutls_certificate_free_credentials(credentials)
            let reason =
                status == GNUTLS_E_CERTIFICATE_KEY_MISMATCH
                ? "the key in \(keyPath) is not the key of the certificate in \(certificatePath)"
                : "the key in \(keyPath) cannot be used with the certificate in \(certificatePath): \(message(status))"
            throw Failure(setting: keySetting, reason: reason)
        }
        return TLSIdentity(
            certificatePEM: certificateText.map { CChar(bitPattern: $0) } + [0],
            keyPEM: keyText.map { CChar(bitPattern: $0) } + [0], credentials: credentials, serialNumber: serial,
            notAfter: notAfter)
    }

    /// The whole file at `path`; a failure names `setting`.
    private static func read(_ path: String, setting: String, what: String) throws(Failure) -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw Failure(
                setting: setting, reason: "the \(what) \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count > 0 { bytes += buffer[0..<count] }
            if count < buffer.count { break }
            // A certificate chain or key is a few KiB; anything this large is the wrong file.
            if bytes.count > 1_048_576 {
                throw Failure(setting: setting, reason: "the \(what) \(path) is over 1 MiB: not a PEM \(what)")
            }
        }
        if ferror(file) != 0 {
            throw Failure(
                setting: setting, reason: "the \(what) \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        return bytes
    }

    /// The first certificate's serial number (hex) and validity; throws when `text` holds none.
    private static func inspectCertificate(
        _ text: [UInt8], path: String
    ) throws(Failure) -> (serial: String, notBefore: Int64, notAfter: Int64) {
        var list: UnsafeMutablePointer<gnutls_x509_crt_t?>?
        var count: UInt32 = 0
        let status = withDatum(text) { datum in
            gnutls_x509_crt_list_import2(&list, &count, &datum, GNUTLS_X509_FMT_PEM, 0)
        }
        guard status >= 0, let list, count > 0, let first = list[0] else {
            throw Failure(
                setting: certificateSetting, reason: "\(path) holds no PEM certificate (\(message(status)))")
        }
        defer {
            for index in 0..<Int(count) { gnutls_x509_crt_deinit(list[index]) }
            appshell_gnutls_free(list)
        }
        var serial = [UInt8](repeating: 0, count: 64)
        var size = serial.count
        let serialText =
            gnutls_x509_crt_get_serial(first, &serial, &size) >= 0
            ? hex(serial[0..<size]) : ""
        return (
            serialText, Int64(gnutls_x509_crt_get_activation_time(first)),
            Int64(gnutls_x509_crt_get_expiration_time(first))
        )
    }

    /// Throws when `text` holds no PEM private key GnuTLS can read (an encrypted one included).
    private static func checkKey(_ text: [UInt8], path: String) throws(Failure) {
        var key: gnutls_x509_privkey_t?
        guard gnutls_x509_privkey_init(&key) == GNUTLS_E_SUCCESS, let key else {
            throw Failure(setting: keySetting, reason: "GnuTLS could not allocate a key")
        }
        defer { gnutls_x509_privkey_deinit(key) }
        let status = withDatum(text) { datum in gnutls_x509_privkey_import2(key, &datum, GNUTLS_X509_FMT_PEM, nil, 0) }
        guard status >= 0 else {
            throw Failure(
                setting: keySetting,
                reason: "\(path) holds no unencrypted PEM private key (\(message(status)))")
        }
    }

    /// Calls `body` with a GnuTLS datum over `bytes`.
    private static func withDatum<Result>(_ bytes: [UInt8], _ body: (inout gnutls_datum_t) -> Result) -> Result {
        var copy = bytes
        return copy.withUnsafeMutableBufferPointer { buffer in
            var datum = gnutls_datum_t(data: buffer.baseAddress, size: UInt32(buffer.count))
            return body(&datum)
        }
    }

    /// A serial number's bytes in hex, without the leading zero bytes DER may add (as `openssl
    /// x509 -serial` prints it, in lower case).
    package static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let significant = bytes.drop { $0 == 0 }
        return (significant.isEmpty ? [0] : significant).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// GnuTLS's words for `status`.
    private static func message(_ status: Int32) -> String {
        gnutls_strerror(status).map { String(cString: $0) } ?? "error \(status)"
    }
}
