@testable import CountdownWorker
import Foundation
import Push
import PushPayloads
import Testing

/// The Android countdown message as sent: the FCM body of the largest message stays under FCM's 4 KB.
@Suite struct AndroidCountdownPushTests {
    let builder = try! PushPayloadBuilder()
    let now = Date(timeIntervalSince1970: 1_776_705_330)

    func stream(title: String, guests: [String]) -> StreamSnapshot {
        StreamSnapshot(id: "65f000000000000000000001", title: title, plannedStartAt: now.addingTimeInterval(5400), creatorName: "Selin Kaya",
                       guestNames: guests)
    }

    @Test func theWholeBodyOfTheLargestMessageFitsFCMsLimit() throws {
        let huge = try builder.prepare(stream(title: String(repeating: "Çok uzun \"başlık\" 🎉 ", count: 500),
                                              guests: (1...80).map { "Konuk \($0) " + String(repeating: "ğ", count: 60) }))
        let token = String(repeating: "t", count: 400)
        let messages = try [
            builder.androidStart(huge, role: .guest, language: .tr, now: now, seq: 1, viewerCount: 1_000_000),
            builder.androidUpdate(huge, role: .creator, language: .en, now: now, seq: 99, shown: now.addingTimeInterval(60)),
            builder.androidEnd(huge, reason: .expired, role: .guest, language: .tr, now: now, seq: 100),
        ]
        for message in messages {
            let body = try #require(FCMRequestBody.encode(.androidCountdown(id: "x", fcmToken: token, message)))
            #expect(body.count < 4096, "\(message.event): \(body.count) bytes")
            let parsed = try #require((try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["message"] as? [String: Any])
            #expect(parsed["data"] as? [String: String] == message.data)
        }
    }

    @Test func theOptionsCarryOver() throws {
        let prepared = try builder.prepare(stream(title: "Akşam", guests: []))
        let update = try builder.androidUpdate(prepared, role: .guest, language: .en, now: now, seq: 2, shown: now.addingTimeInterval(1800))
        #expect(update.priority == .normal)
        let push = PushMessage.androidCountdown(id: "update:s1:d1", fcmToken: "fcm", update)
        #expect(push == .androidData(id: "update:s1:d1", fcmToken: "fcm",
                                     options: AndroidMessageOptions(priority: .normal, ttlSeconds: 5400, collapseKey: update.collapseKey),
                                     data: update.data))
        let end = try builder.androidEnd(prepared, reason: .started, role: nil, language: .en, now: now, seq: 3)
        let pushedEnd = PushMessage.androidCountdown(id: "end", fcmToken: "fcm", end)
        #expect(pushedEnd.content == .androidData(fcmToken: "fcm", options: AndroidMessageOptions(priority: .high, ttlSeconds: 5400 + 3600), data: end.data))
    }
}
