"""The held-out test splits stay exactly as their independent writer froze them (their sha256 go into each REPORT)."""

import hashlib
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
# v1 (heldout/) and v2 (heldout_2/) were each scored once at the end of a round, then became training data for the
# request heads and the relation model (their figures are training figures now). v3 (heldout_3/) was scored once in
# the round after, then examined: a development set (its save requests are training data too). v4 (heldout_4/) was
# written after that; its save requests and pairs were scored once and its requests examined (training data now),
# its timelines are not scored yet. v5 (heldout_5/) was written after that and is the test split for requests and
# pairs (memory_daemon/evals/heldout.py) until v6 (heldout_6/) replaced it for requests and timelines.
FROZEN = {
    "heldout/save_requests_test.jsonl": "e0a9b52ff7acf03cc80df43ccbacc19a8af39800c263c4c4b0031ca97dd82b9a",
    "heldout/relation_pairs_test.jsonl": "dea6460ee46ac7f753e13d0ec7fc71bdd1f45aa6437661a30c60fdcb77b8f811",
    "heldout/entities_test.jsonl": "9ea2036e14a2749a8bfb7730dfe48a2ad0d948696c2bc6ffefa878069207f27e",
    "heldout/timelines_test.jsonl": "b1ed0e5c5bc98c54a8bc6d0b46ee06a77a6bb2c4ddbdfe1d3f6d4993d470f9ec",
    "heldout_2/save_requests_test_2.jsonl": "2bafa41e851c6c90ca10958bef624a4721ef9a7738920704ed1707f75fd0405d",
    "heldout_2/relation_pairs_test_2.jsonl": "8874d08f1f9a6a303c5f609486f96d8bf6c8f27355c6528ab56a093cb628ee19",
    "heldout_2/entities_test_2.jsonl": "c577d4c63c4631b4e1120150543f8f5fe26c1bf844a11f5209c02f68d1d689b5",
    "heldout_2/timelines_test_2.jsonl": "bb7f22ef7287d7662c39d49bd7ff396db1a978a996691322b5e99770843a4a26",
    "heldout_3/save_requests_test_3.jsonl": "eee86ff6bc103615d6b49f46fa55e51441700f20348710c3c6cf5f070ab442d7",
    "heldout_3/relation_pairs_test_3.jsonl": "9699b53ae7c12498bd5eb7e5b2125e878058fb795560f80ed6c83b710aab1b44",
    "heldout_3/timelines_test_3.jsonl": "9e25e3397958c4862605e47791b0c9bf9dbb6ca3623a950bd262f6f921668c8f",
    # Written after v3 was scored and looked at: the timelines by one helper, the requests and pairs by another.
    "heldout_4/timelines_test_4.jsonl": "3445ad70916c93f33b07c07339b3f43315ac83a34ab62242dace16f644a49107",
    "heldout_4/save_requests_test_4.jsonl": "cac34a2c05441b8b857c5c9755926f63624d39dc36a5fc14213bc0ec84d17878",
    "heldout_4/relation_pairs_test_4.jsonl": "365c3b3e883c22dbc556fef9db402b4cc64a17c7660e0e5f0e63ebd4c476e88e",
    # Written on 2026-12-02 by a fresh helper from the category brief, before the twelfth round of the request heads.
    "heldout_5/save_requests_test_5.jsonl": "a8f030ff5dbb545e7d60725ff73c7e54df705b5918ef091c9bed43d358a54635",
    "heldout_5/relation_pairs_test_5.jsonl": "3611a913506acdd737bd1f2bc1ad50a96af242ba1c53111d7218624a69fb3661",
    # Written the same day by another fresh helper, after v4's timelines were scored, before the guard on updates of
    # memories worded as a change.
    "heldout_5/timelines_test_5.jsonl": "c802591953e0fda6f03fddde8c9f623eb154557429ffc2765daefdc0b1a78c76",
    # Written on 2026-12-02 by two more fresh helpers after v5 was scored and its misses read, before the thirteenth
    # round of the request heads and before any timeline change judged on them.
    "heldout_6/save_requests_test_6.jsonl": "1193d1b17364b6e803ab24b8c0f832080553fd318e036d8e30556d7cedccb569",
    "heldout_6/timelines_test_6.jsonl": "9153a76fbef9d49d9a0798a6c0a141df18b22a2f4611255fef6a887aafb7d586",
    # Written the same day by another fresh helper, after v6's timelines were scored once and read, before the relation
    # model's run 12.
    "heldout_7/timelines_test_7.jsonl": "38dc9dbe7acad36920bf0810bee5516b6a1a3f23855b2259c1ee40650ae14549",
    # Written on 2026-12-02 by two more fresh helpers, before the request heads' fourteenth round and relation run 13.
    "heldout_8/save_requests_test_8.jsonl": "e284827fd94647cb9d3dfd44192769c4d47b9967d61c611f7615f7cb9acaa2db",
    "heldout_8/timelines_test_8.jsonl": "111acbe65e5100afead7372a3f9f8cd13b219e5db74f9cc35b436be31d7c79e0",
    "heldout_9/save_requests_test_9.jsonl": "498e888a9f92e4274c4c3bb6f33b97176646ef794a934eb6a5ec99a2642810e1",
    "heldout_10/timelines_test_10.jsonl": "0c6983ad6105219b1421c1375d0627b3137abe635ff44972d7b2ceb726e219fa",
    # Session 11: written by a fresh helper before the request heads' sixteenth round (v9 had been read by then).
    "heldout_11/save_requests_test_11.jsonl": "b639148a2d58dc9bf866b6246dbb307caf950c81768b98dd6517dfadafead84c",
    # Session 11: another fresh helper, before any timeline change is judged on it (v10 was scored and read by then).
    "heldout_11/timelines_test_11.jsonl": "90996117040c4c21c7f9c150c4318dd369ad38434c50c52f50f1eeda4fa3cc1b",
    # Session 11: a third fresh helper; the first pair split since v5, scored once with the unchanged relation model.
    "heldout_11/relation_pairs_test_11.jsonl": "e1ef4fc333410ada91395a2c161af4920a795b75727cf5af816bee0f150bfdb7",
    # Session 12: a fresh helper, after v11's timelines were scored (its text was shown once in a review); first scored
    # in session 22 as a development check of relevance round 3, a development set since.
    "heldout_12/timelines_test_12.jsonl": "93fdf116fd96d3f1355b72cd5542f6266504ae478d4919bbab509d58dceaf3fb",
    # Session 18: a fresh helper, before any change to supersession or the relation model was judged on them; scored once
    # in session 19 with relation runs 12 and 14 (README, Quality), a development set since.
    "heldout_13/timelines_test_13.jsonl": "b050a3e5ea967adb05591a593f9990cfc0b355bd4c486e3c63797eb3231d7b03",
    "heldout_13/relation_pairs_test_13.jsonl": "3e0631dd9537804d5da0805f225de144f03eeda2fbf92314da94ddaa72fb2b1b",
    # Session 19: a fresh helper, the same blocks as v13, frozen unscored; scored once in session 20 with relation
    # runs 15 (shipped) and 12 (README, Quality), a development set since.
    "heldout_14/timelines_test_14.jsonl": "932bf9914daf31f3c333e7032b6e4a13ced482d73199fa2688ed25b24dad82ba",
    "heldout_14/relation_pairs_test_14.jsonl": "318cf36b07870a7712097001acd4095e7cb18cf54f820b589cd6f8348e6288c2",
    # Session 20: a fresh helper, the same blocks as v13 and v14, before relation run 16 is judged; frozen unscored and
    # unread until session 24, which scored it once (README, Quality).
    "heldout_15/timelines_test_15.jsonl": "4281e5ec46a894633e43d4373f34542fc05a1e20d422b3bdf9fadb9a78ab386a",
    "heldout_15/relation_pairs_test_15.jsonl": "ff1ee466b877d8a66dafff0e013dc84eb7a09c87b2105d368e37de955c484de5",
    # Session 24: a fresh helper, the timelines blocks of v13-v15, frozen unscored and unread after v15 was scored.
    "heldout_16/timelines_test_16.jsonl": "48a52d8ddb15120f271a16e578f2d0433ca3e818a5781988a9c1410bb1729e76",
    # Session 25: a fresh helper, the same blocks, frozen unscored and unread after v16 was scored.
    "heldout_17/timelines_test_17.jsonl": "ee66ffeb2698066bf575f82caba52904b86ef376c78569374dbaba748369dce5",
    # Session 27: a fresh helper, the same blocks, frozen unscored and unread before variant H is judged on it.
    "heldout_18/timelines_test_18.jsonl": "7821749cdc2595311298a6c1d0adb382fe02efeef4efeb40131bb3691742d358",
    # Session 27: another fresh helper, the same blocks, frozen unscored and unread before variant H2 is judged on it.
    "heldout_19/timelines_test_19.jsonl": "b1a3109d4fc01bcf65c82317c39700a878d660f8370a407480b5bd41272a1544",
    # Session 27: a third fresh helper (v19's brief), frozen unscored and unread; scored once in session 28 with I.
    "heldout_20/timelines_test_20.jsonl": "192d8939b2337daff53aad4e0281a4410943616fd93a6846d58c45fd8be51530",
    # Session 28: a fourth fresh helper (the same brief, topics used before avoided), frozen unscored and unread for
    # the next candidate; session 28 scored v20 with variant I.
    "heldout_21/timelines_test_21.jsonl": "e36f78576dd43576ff8a85a46ade501b7a8e1aaed28055f79bedcae4c6cc2872",
    # Session 28: a fifth fresh helper (v21's brief), commissioned as a spare, frozen unscored and unread.
    "heldout_22/timelines_test_22.jsonl": "bebaf2d6e6fa843c99baf520521f93c1bcd2d64d57b4135c1631a86107610c03",
    # Session 36: a sixth fresh helper (v21's brief, topics used before avoided), frozen unscored and unread; scored
    # once in session 36 with H3, H2 and the session's starting code.
    "heldout_23/timelines_test_23.jsonl": "29357bb682c53241ea4dff9614222a7e1e4696a1bad36f1aae17be29248e9b80",
    # Session 36: a seventh fresh helper (the same brief, more topics avoided), frozen unscored and unread; scored
    # once in session 37 with M5 and with session 36's code.
    "heldout_24/timelines_test_24.jsonl": "681ba3a2647d8eac8659600f57fdeb36355c62012a2f1df4615593619cc0ac0c",
    # Session 37: an eighth fresh helper (v21-v24's kinds, more topics avoided), frozen unscored and unread for the
    # next candidate.
    "heldout_25/timelines_test_25.jsonl": "3455733b110345f6cad8f4be0483c0eb52fc355a5c03bd7bd5d11bd7b1fc96ee",
    # Session 39: a ninth fresh helper, the same blocks, frozen unscored and unread while v25 judges R.
    "heldout_26/timelines_test_26.jsonl": "0b65cf3c9af73ce0e4794e27de33bf5fcf1e6333f333a96692c5c51aeb3fee11",
    # Session 40: a tenth fresh helper, the same kinds, frozen unscored and unread while v26 judges P.
    "heldout_27/timelines_test_27.jsonl": "518f39465fdce06bfeed6a38b2b1888a55932bd36709ec190f8dd408805773c0",
    # Session 42: an eleventh fresh helper, the same kinds, frozen unscored and unread after v26 was scored (C1).
    "heldout_28/timelines_test_28.jsonl": "fb1f6f414a1f47f4c7423d6e52106e5627ad3b396c5a12ed412ae0db27c57c30",
    # Session 43: a twelfth fresh helper, the same kinds, frozen unscored and unread after v27 was scored (R1).
    "heldout_29/timelines_test_29.jsonl": "f4a1b6c45faa22f0aeb5fbafdc7bbe6f8c2943bbda31dcb57b2ca67491c08ddb",
    # Session 45: a thirteenth fresh helper, the same kinds, frozen unscored and unread after v28 was scored (F).
    "heldout_30/timelines_test_30.jsonl": "fea7476984b2c4028ea6968b8d06cd41c3fd06d35cf358c3616ad14d4168f5e7",
    # Session 46: a fourteenth fresh helper, the same kinds, frozen unscored and unread.
    "heldout_31/timelines_test_31.jsonl": "103505aefdad0ea5f9bcc37872580f372aed64a893cce6b4e9d10e628e64f233",
    # Session 47: a fifteenth fresh helper, the same kinds, frozen unscored and unread after v29 was scored (D3).
    "heldout_32/timelines_test_32.jsonl": "610209a3bd6eeff2a1ef03b8e33959a6a6e71ac91f772bf31bcef6e7f4ce748f",
    # Session 49: a sixteenth fresh helper, the same kinds, frozen unscored and unread before R6 was trained.
    "heldout_33/timelines_test_33.jsonl": "8d3acf5acdd4a2e625eceda8c925f2b4779ace3ae9f02caa2309240146abcab8",
    # Session 43: a fresh helper (the partial-update brief, models/partial/data/DATASET.md), frozen before the
    # partial-update reader was trained; scored once at the end of session 43.
    "partial/partial_test.jsonl": "c12c07ba4c03f9d9a27ce9633ba081667183c43a00f9ebc4a79c8cd333d621e8",
    # Session 48: a fresh helper (models/partial/data/BRIEF_2.md), frozen before R4 was trained; unscored and unread.
    "partial_2/partial_test_2.jsonl": "c6e9b5aa6633e9b2acec56edfdbeee8817f01cc809e1e785c4f02511806e1715",
    # Session 37: a fresh helper (the first brief in models/holder/data/DATASET.md), frozen before the holder model
    # was trained; scored once at the end of session 37.
    "holders/holders_test.jsonl": "ddf753107f568eaf90b0f564626c53fe81d3c91ec3072094a68fe29513bc4659",
    # Session 29: a fresh helper (the pointing-statement brief, models/relation/data/DATASET.md), frozen before any
    # training on the pointing pairs; unscored and unread.
    "relation_pointing/relation_pointing_test.jsonl": "031f99b012e184e5941b1550839a6dd18e685f25b851974813fcc90e6bdb48c4",
    # Session 44: a fresh helper (models/relation/data/BRIEF_informal.md), frozen before relation run 26 was trained;
    # unscored and unread.
    "relation_informal/relation_informal_test.jsonl": "a360d9856735b1438ca48ebcba12f94c602ea2e452c33728ef34120d66056f52",
    # Session 10: written by a fresh helper before the relevance model was trained.
    "relevance/relevance_test.jsonl": "3b4b98779c6dee9821457e16568f3c5f473ae9862e589b5e834f9d74331aee91",
    # Session 30: a fresh helper (the round-4 brief, models/relevance/data/DATASET.md), frozen before round 4's
    # training; unscored and unread.
    "relevance_4/relevance_test_4.jsonl": "0c5a355eafb8c511f370c676c5388fd1d3e62479b7f6aba1670a083a5240b6e2",
}


@pytest.mark.parametrize("name, sha256", sorted(FROZEN.items()))
def test_heldout_split_is_unchanged(name, sha256):
    path = DATA / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256, f"{name} was edited after freezing"
    assert f"{sha256}  {path.name}" in (path.parent / "README.md").read_text()
