import Glibc

/// Dates as HTTP writes them (IMF-fixdate, RFC 9110 §5.6.7).
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for a Unix time.
    static func format(seconds: Int) -> String {
        let time = brokenDown(seconds)
        return "\(days[Int(time.tm_wday)]), \(pad(time.tm_mday)) \(months[Int(time.tm_mon)]) \(time.tm_year + 1900) "
            + "\(pad(time.tm_hour)):\(pad(time.tm_min)):\(pad(time.tm_sec)) GMT"
    }

    private static func brokenDown(_ seconds: Int) -> tm {
        var clock = time_t(seconds)
        var result = tm()
        gmtime_r(&clock, &result)
        return result
    }

    private static func pad(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
}
