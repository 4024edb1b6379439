import Glibc

/// An open regular file handed to the server as a response body; closed exactly once: by
/// libmicrohttpd once a response was made of it (after sending), else by `deinit`.
public final class OpenFile: @unchecked Sendable {
    // @unchecked: the descriptor is only read by the one thread building the response, and
    // `take()` transfers ownership once.
    private var descriptor: Int32
    /// The file's size in bytes when it was opened.
    public let size: Int

    init(descriptor: Int32, size: Int) {
        self.descriptor = descriptor
        self.size = size
    }

    /// The file's bytes from its start, or `nil` when it cannot be read whole.
    func readAll() -> [UInt8]? {
        guard descriptor >= 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        let complete = bytes.withUnsafeMutableBytes { buffer -> Bool in
            while done < size {
                let count = pread(descriptor, buffer.baseAddress! + done, size - done, off_t(done))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
        return complete ? bytes : nil
    }

    /// Hands the descriptor to `make`, which makes a libmicrohttpd response of it: ownership moves
    /// (libmicrohttpd closes it when the response is destroyed) only when a response was made;
    /// otherwise the descriptor stays here and `deinit` closes it. `nil` once handed over.
    func handOver(_ make: (_ descriptor: Int32) -> OpaquePointer?) -> OpaquePointer? {
        guard descriptor >= 0, let made = make(descriptor) else { return nil }
        descriptor = -1
        return made
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}
