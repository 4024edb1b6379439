import FoundationEssentials

/// Content versions of the public files the page links, so their URLs change when they do and
/// browsers may cache them for a year.
public struct AssetVersions: Sendable {
    private let versions: [String: String]

    /// Reads `names` in `directory` and keeps a short hash of each (a missing file gets none).
    /// The shell's page script (`PageScript.fileName`) and base stylesheet
    /// (`BaseStylesheet.fileName`) always have the versions of the files the framework serves from
    /// memory, whatever the directory holds.
    public init(directory: String, names: [String]) {
        var versions: [String: String] = [:]
        for name in names {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else { continue }
            versions[name] = AssetVersions.hash(data)
        }
        versions[PageScript.fileName] = PageScript.version
        versions[BaseStylesheet.fileName] = BaseStylesheet.version
        self.versions = versions
    }

    /// `/name?v=version`, or `/name` for a file that was not found.
    public func url(_ name: String) -> String {
        guard let version = versions[name] else { return "/" + name }
        return "/\(name)?v=\(version)"
    }

    /// A short hash of `bytes` (FNV-1a, 64 bits, in hexadecimal): enough to tell versions apart;
    /// nothing here needs to resist an attacker.
    static func hash(_ bytes: some Sequence<UInt8>) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
