import Foundation

/// Every user-visible text of the payloads, per language.
struct LocalizedTexts: Sendable {
    /// Shown instead of an empty stream title.
    var untitledStream: String
    /// `statusText` and `subtitle` while counting down.
    var countdownStatus: String
    var countdownSubtitle: String
    /// The start push's alert title.
    var startAlertTitle: String
    /// The reminder notification's title.
    var reminderTitle: String
    /// "<title> starts in N minutes".
    var startsIn: @Sendable (_ title: String, _ minutes: Int) -> String
    /// "<title> is starting now", when the planned start has come.
    var startingNow: @Sendable (_ title: String) -> String
    /// `statusText` of an ended activity.
    var endStatus: @Sendable (EndReason) -> String
    /// `subtitle` of an ended activity.
    var endSubtitle: @Sendable (EndReason) -> String
    /// `statusText` of an activity ended because its stream moved past its 8-hour life (the long move).
    var movedStatus: String
    /// `subtitle` of that end: "New time: <when>", `when` from `localTime`.
    var movedTo: @Sendable (_ when: String) -> String
    /// Month names, January first.
    var months: [String]
    /// "<day> <month> <HH:mm>" in this language's order.
    var localTime: @Sendable (_ day: Int, _ month: String, _ time: String) -> String

    static func of(_ language: PayloadLanguage) -> LocalizedTexts {
        switch language {
        case .tr: turkish
        case .en: english
        }
    }

    static let turkish = LocalizedTexts(
        untitledStream: "Canlı yayın",
        countdownStatus: "Yayına kalan süre",
        countdownSubtitle: "Yayına katılmak için dokun",
        startAlertTitle: "Yayının yaklaşıyor",
        reminderTitle: "Yayın hatırlatması",
        startsIn: { title, minutes in "\(title) \(minutes) dakika sonra başlıyor" },
        startingNow: { title in "\(title) şimdi başlıyor" },
        endStatus: { reason in
            switch reason {
            case .ready: "Yayın hazır"
            case .started: "Yayın başladı"
            case .cancelled: "Yayın iptal edildi"
            case .expired: "Yayın başlamadı"
            }
        },
        endSubtitle: { reason in reason.opensStream ? "Yayına katılmak için dokun" : "Ana sayfaya dönmek için dokun" },
        movedStatus: "Yayının zamanı değişti",
        movedTo: { when in "Yeni zamanı: \(when)" },
        months: ["Ocak", "Şubat", "Mart", "Nisan", "Mayıs", "Haziran", "Temmuz", "Ağustos", "Eylül", "Ekim", "Kasım", "Aralık"],
        localTime: { day, month, time in "\(day) \(month) \(time)" }
    )

    static let english = LocalizedTexts(
        untitledStream: "Live stream",
        countdownStatus: "Starts in",
        countdownSubtitle: "Tap to join the stream",
        startAlertTitle: "Your stream is coming up",
        reminderTitle: "Stream reminder",
        startsIn: { title, minutes in "\(title) starts in \(minutes) \(minutes == 1 ? "minute" : "minutes")" },
        startingNow: { title in "\(title) is starting now" },
        endStatus: { reason in
            switch reason {
            case .ready: "The stream is ready"
            case .started: "The stream has started"
            case .cancelled: "The stream was cancelled"
            case .expired: "The stream did not start"
            }
        },
        endSubtitle: { reason in reason.opensStream ? "Tap to join the stream" : "Tap to go to the home page" },
        movedStatus: "The stream has moved",
        movedTo: { when in "New time: \(when)" },
        months: ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"],
        localTime: { day, month, time in "\(day) \(month), \(time)" }
    )

    /// `date` as this language writes a day and a time, in `timeZone` (24-hour clock); with " UTC" when the device's
    /// time zone is not known.
    func when(_ date: Date, timeZone: TimeZone?) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let parts = calendar.dateComponents([.day, .month, .hour, .minute], from: date)
        let (hour, minute) = (parts.hour ?? 0, parts.minute ?? 0)
        let time = (hour < 10 ? "0" : "") + String(hour) + ":" + (minute < 10 ? "0" : "") + String(minute)
        let month = months[min(max((parts.month ?? 1) - 1, 0), months.count - 1)]
        return localTime(parts.day ?? 1, month, time) + (timeZone == nil ? " UTC" : "")
    }

    /// The alert / reminder body for a stream planned `minutesLeft` minutes from now (nil: starting now).
    func countdownSentence(title: String, minutesLeft: Int?) -> String {
        minutesLeft.map { startsIn(title, $0) } ?? startingNow(title)
    }
}
