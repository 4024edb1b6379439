/// A connection for sending a request in pieces (to keep it in flight) and reading the answer.
public final class RawConnection: @unchecked Sendable {
    // @unchecked: used by one thread at a time, handed over between them explicitly.
    private let connection: TestConnection

    /// Connects to 127.0.0.1:`port`; `receiveBufferBytes` fixes the receive buffer's size (for a
    /// client that reads slowly: the server cannot push more than that ahead of the reader);
    /// `source` is the loopback address to connect from (`127.0.0.2`…: another client to the
    /// server's per-address limits); a read or write that waits `timeoutSeconds` throws. With
    /// `tls`, it shakes hands first and the bytes go through TLS.
    public init(
        port: Int, receiveBufferBytes: Int? = nil, source: String? = nil, timeoutSeconds: Int = 60, tls: TestTLS? = nil
    ) throws {
        connection = try TestConnection(
            port: port, receiveBufferBytes: receiveBufferBytes, source: source, timeoutSeconds: timeoutSeconds, tls: tls
        )
    }

    /// HTTPS: the serial number (hex) of the certificate the server presented.
    public var peerSerialNumber: String? { connection.tls?.peerSerialNumber }

    /// Sends `text` as it is.
    public func send(_ text: String) throws { try connection.write(Array(text.utf8)) }

    /// Reads until `marker` has arrived; returns the text up to and including it.
    public func read(through marker: String) throws -> String {
        String(decoding: try connection.read(through: Array(marker.utf8)), as: UTF8.self)
    }

    /// Reads exactly `count` bytes (those after a marker already read first); throws when the
    /// connection closes before.
    public func readBytes(_ count: Int) throws -> [UInt8] { try connection.readBytes(count) }

    /// Returns everything the server sends until it closes the connection.
    public func readToEnd() throws -> String { String(decoding: try connection.readToEnd(), as: UTF8.self) }

    /// Sends `text`, then returns everything the server sends until it closes the connection.
    public func finish(_ text: String) throws -> String {
        try send(text)
        return String(decoding: try connection.readToEnd(), as: UTF8.self)
    }
}
