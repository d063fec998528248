@testable import Push
import Testing

/// FCM's usual success answer is read without the JSON parser; every other body is left to it.
@Suite struct FCMSuccessNameTests {
    @Test func readsThePlainNameMember() {
        let plain: [(String, String)] = [
            (#"{"name":"projects/p/messages/0:1776384000%abc"}"#, "projects/p/messages/0:1776384000%abc"),
            (" {\n \"name\" : \"projects/p/messages/1\" }\r\n", "projects/p/messages/1"),
            (#"{"name":""}"#, ""),
            (#"{"name":"ş/é"}"#, "ş/é"),
        ]
        for (body, name) in plain {
            #expect(PushOutcomeClassifier.plainNameMember(Array(body.utf8)) == name, "\(body)")
            #expect(PushOutcomeClassifier.fcmMessageName(Array(body.utf8)) == name, "\(body)")
        }
    }

    @Test func leavesEveryOtherShapeToTheParser() {
        let others: [[UInt8]] = [
            Array(#"{"name":"a\/b"}"#.utf8), Array(#"{"name":"x","other":1}"#.utf8), Array(#"{"other":1,"name":"x"}"#.utf8),
            Array(#"{"name":"x",}"#.utf8), Array(#"{"name":"a","name":"b"}"#.utf8), Array(#"{"name":null}"#.utf8),
            Array(#"{"name":"x"} trailing"#.utf8), Array(#"{"name":"x""#.utf8), Array(#"{"name":"x"#.utf8),
            Array("{\"name\":\"a\u{1}b\"}".utf8), Array(#"{"name":""#.utf8) + [0xFF] + Array(#""}"#.utf8),
            Array(#"{"Name":"x"}"#.utf8), [], Array("{".utf8),
        ]
        for body in others {
            #expect(PushOutcomeClassifier.plainNameMember(body) == nil, "\(String(decoding: body, as: UTF8.self))")
        }
        #expect(PushOutcomeClassifier.fcmMessageName(Array(#"{"name":"a\/b"}"#.utf8)) == "a/b")
        #expect(PushOutcomeClassifier.fcmMessageName(Array(#"{"other":1,"name":"x"}"#.utf8)) == "x")
    }
}
