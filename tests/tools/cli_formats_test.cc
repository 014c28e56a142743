// The machine-readable reports of `parity check` and `parity explore`: --format json (schema
// parity.<command>/1, structured locations, errors as documents) and --format sarif, validated
// against the structure SARIF 2.1.0 requires (OASIS SARIF v2.1.0, sections 3.13 sarifLog to
// 3.58; the required properties, value ranges and property names of its JSON schema), checked
// here without a schema library or network.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/trace/trace_file.h"
#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

// ---------------------------------------------------------------- SARIF 2.1.0 structure

// Collects every way a log departs from the SARIF 2.1.0 structure; empty = valid.
class SarifValidator {
 public:
  std::vector<std::string> Validate(const json& log) {
    errors_.clear();
    Object(log, "sarifLog", {"$schema", "version", "runs", "inlineExternalProperties",
                             "properties"});
    if (!log.is_object()) return errors_;
    Require(log, "version", "sarifLog");
    if (log.contains("version") && log["version"] != "2.1.0") Fail("sarifLog.version != 2.1.0");
    Require(log, "runs", "sarifLog");
    if (log.contains("runs")) {
      if (!log["runs"].is_array()) Fail("sarifLog.runs is not an array");
      else for (const json& run : log["runs"]) Run(run);
    }
    return errors_;
  }

 private:
  void Fail(const std::string& what) { errors_.push_back(what); }

  void Require(const json& j, const char* key, const std::string& where) {
    if (!j.is_object() || !j.contains(key)) Fail(where + ": required property '" + key + "'");
  }

  // An object whose properties are all defined by the spec for its type.
  void Object(const json& j, const std::string& type, std::set<std::string> allowed) {
    if (!j.is_object()) {
      Fail(type + " is not an object");
      return;
    }
    for (const auto& [key, value] : j.items()) {
      if (!allowed.count(key)) Fail(type + ": property '" + key + "' is not defined by SARIF");
    }
    if (j.contains("properties")) PropertyBag(j["properties"], type + ".properties");
  }

  void PropertyBag(const json& j, const std::string& where) {
    if (!j.is_object()) {
      Fail(where + " is not an object");
      return;
    }
    if (j.contains("tags")) {
      std::set<std::string> seen;
      if (!j["tags"].is_array()) Fail(where + ".tags is not an array");
      else for (const json& t : j["tags"]) {
        if (!t.is_string() || !seen.insert(t.get<std::string>()).second) {
          Fail(where + ".tags: not unique strings");
        }
      }
    }
  }

  void Level(const json& j, const std::string& where) {
    static const std::set<std::string> kLevels = {"none", "note", "warning", "error"};
    if (!j.is_string() || !kLevels.count(j.get<std::string>())) Fail(where + ": bad level");
  }

  // message (3.11): text or id is required.
  void Message(const json& j, const std::string& where) {
    Object(j, where, {"text", "markdown", "id", "arguments", "properties"});
    if (j.is_object() && !(j.contains("text") && j["text"].is_string()) &&
        !(j.contains("id") && j["id"].is_string())) {
      Fail(where + ": a message needs text or id");
    }
  }

  // multiformatMessageString (3.12): text is required.
  void MultiformatString(const json& j, const std::string& where) {
    Object(j, where, {"text", "markdown", "properties"});
    if (j.is_object() && !(j.contains("text") && j["text"].is_string())) {
      Fail(where + ": required string 'text'");
    }
  }

  void Run(const json& run) {
    Object(run, "run",
           {"tool", "invocations", "conversion", "language", "versionControlProvenance",
            "originalUriBaseIds", "artifacts", "logicalLocations", "graphs", "results",
            "automationDetails", "runAggregates", "baselineGuid", "redactionTokens",
            "defaultEncoding", "defaultSourceLanguage", "newlineSequences", "columnKind",
            "externalPropertyFileReferences", "threadFlowLocations", "taxonomies", "addresses",
            "translations", "policies", "webRequests", "webResponses", "specialLocations",
            "properties"});
    Require(run, "tool", "run");
    if (!run.is_object() || !run.contains("tool")) return;
    Object(run["tool"], "tool", {"driver", "extensions", "properties"});
    Require(run["tool"], "driver", "tool");
    std::vector<std::string> rule_ids;
    if (run["tool"].contains("driver")) {
      const json& driver = run["tool"]["driver"];
      Object(driver, "toolComponent",
             {"guid", "name", "organization", "product", "productSuite", "shortDescription",
              "fullDescription", "fullName", "version", "semanticVersion",
              "dottedQuadFileVersion", "releaseDateUtc", "downloadUri", "informationUri",
              "globalMessageStrings", "notifications", "rules", "taxa", "locations", "language",
              "contents", "isComprehensive", "localizedDataSemanticVersion",
              "minimumRequiredLocalizedDataSemanticVersion", "associatedComponent",
              "translationMetadata", "supportedTaxonomies", "properties"});
      Require(driver, "name", "toolComponent");
      if (driver.contains("rules")) {
        for (const json& rule : driver["rules"]) {
          ReportingDescriptor(rule);
          rule_ids.push_back(rule.value("id", ""));
        }
      }
    }
    if (run.contains("invocations")) {
      for (const json& inv : run["invocations"]) Invocation(inv);
    }
    if (run.contains("results")) {
      if (!run["results"].is_array()) Fail("run.results is not an array");
      else for (const json& r : run["results"]) Result(r, rule_ids);
    }
  }

  void ReportingDescriptor(const json& rule) {
    Object(rule, "reportingDescriptor",
           {"id", "deprecatedIds", "guid", "deprecatedGuids", "name", "deprecatedNames",
            "shortDescription", "fullDescription", "messageStrings", "defaultConfiguration",
            "helpUri", "help", "relationships", "properties"});
    Require(rule, "id", "reportingDescriptor");
    for (const char* key : {"shortDescription", "fullDescription", "help"}) {
      if (rule.contains(key)) MultiformatString(rule[key], std::string("rule.") + key);
    }
    if (rule.contains("defaultConfiguration")) {
      const json& c = rule["defaultConfiguration"];
      Object(c, "reportingConfiguration", {"enabled", "level", "rank", "parameters", "properties"});
      if (c.contains("level")) Level(c["level"], "reportingConfiguration.level");
    }
  }

  void Invocation(const json& inv) {
    Object(inv, "invocation",
           {"commandLine", "arguments", "responseFiles", "startTimeUtc", "endTimeUtc", "exitCode",
            "ruleConfigurationOverrides", "notificationConfigurationOverrides",
            "toolExecutionNotifications", "toolConfigurationNotifications",
            "exitCodeDescription", "exitSignalName", "exitSignalNumber",
            "processStartFailureMessage", "executionSuccessful", "machine", "account",
            "processId", "executableLocation", "workingDirectory", "environmentVariables",
            "stdin", "stdout", "stderr", "stdoutStderr", "properties"});
    Require(inv, "executionSuccessful", "invocation");
    if (inv.contains("executionSuccessful") && !inv["executionSuccessful"].is_boolean()) {
      Fail("invocation.executionSuccessful is not a boolean");
    }
    if (inv.contains("exitCode") && !inv["exitCode"].is_number_integer()) {
      Fail("invocation.exitCode is not an integer");
    }
    if (inv.contains("toolExecutionNotifications")) {
      for (const json& n : inv["toolExecutionNotifications"]) {
        Object(n, "notification",
               {"locations", "message", "level", "threadId", "timeUtc", "exception",
                "descriptor", "associatedRule", "properties"});
        Require(n, "message", "notification");
        if (n.contains("message")) Message(n["message"], "notification.message");
        if (n.contains("level")) Level(n["level"], "notification.level");
        if (n.contains("locations")) {
          for (const json& l : n["locations"]) Location(l, "notification.locations[]");
        }
        if (n.contains("descriptor")) {
          Object(n["descriptor"], "reportingDescriptorReference",
                 {"id", "index", "guid", "toolComponent", "properties"});
        }
      }
    }
  }

  void Result(const json& r, const std::vector<std::string>& rule_ids) {
    Object(r, "result",
           {"ruleId", "ruleIndex", "rule", "kind", "level", "message", "analysisTarget",
            "locations", "guid", "correlationGuid", "occurrenceCount", "partialFingerprints",
            "fingerprints", "stacks", "codeFlows", "graphs", "graphTraversals",
            "relatedLocations", "suppressions", "baselineState", "rank", "attachments",
            "hostedViewerUri", "workItemUris", "provenance", "fixes", "taxa", "webRequest",
            "webResponse", "properties"});
    Require(r, "message", "result");
    if (r.contains("message")) Message(r["message"], "result.message");
    if (r.contains("level")) Level(r["level"], "result.level");
    if (r.contains("ruleIndex")) {
      if (!r["ruleIndex"].is_number_integer() || r["ruleIndex"].get<int>() < -1) {
        Fail("result.ruleIndex is not an integer >= -1");
      } else if (int i = r["ruleIndex"].get<int>(); i >= 0) {
        // 3.27.6: ruleIndex refers to tool.driver.rules, whose id must equal ruleId.
        if (i >= static_cast<int>(rule_ids.size())) Fail("result.ruleIndex out of range");
        else if (r.contains("ruleId") && r["ruleId"] != rule_ids[i]) {
          Fail("result.ruleId differs from the id of rules[ruleIndex]");
        }
      }
    }
    if (r.contains("locations")) {
      for (const json& l : r["locations"]) Location(l, "result.locations[]");
    }
    if (r.contains("relatedLocations")) {
      std::set<std::string> seen;
      std::set<int> ids;
      for (const json& l : r["relatedLocations"]) {
        Location(l, "result.relatedLocations[]");
        if (!seen.insert(l.dump()).second) Fail("result.relatedLocations: items not unique");
        if (l.contains("id") && !ids.insert(l["id"].get<int>()).second) {
          Fail("result.relatedLocations: ids not unique within the result");
        }
      }
    }
    if (r.contains("codeFlows")) {
      for (const json& flow : r["codeFlows"]) {
        Object(flow, "codeFlow", {"message", "threadFlows", "properties"});
        Require(flow, "threadFlows", "codeFlow");
        if (!flow.contains("threadFlows") || flow["threadFlows"].empty()) {
          Fail("codeFlow.threadFlows: at least one is required");
          continue;
        }
        if (flow.contains("message")) Message(flow["message"], "codeFlow.message");
        for (const json& t : flow["threadFlows"]) {
          Object(t, "threadFlow",
                 {"id", "message", "initialState", "immutableState", "locations", "properties"});
          if (!t.contains("locations") || t["locations"].empty()) {
            Fail("threadFlow.locations: at least one is required");
            continue;
          }
          for (const json& tl : t["locations"]) {
            Object(tl, "threadFlowLocation",
                   {"index", "location", "stack", "kinds", "taxa", "module", "state",
                    "nestingLevel", "executionOrder", "executionTimeUtc", "importance",
                    "webRequest", "webResponse", "properties"});
            if (tl.contains("location")) Location(tl["location"], "threadFlowLocation.location");
          }
        }
      }
    }
  }

  void Location(const json& l, const std::string& where) {
    Object(l, where, {"id", "physicalLocation", "logicalLocations", "message", "annotations",
                      "relationships", "properties"});
    if (!l.is_object()) return;
    if (l.contains("id") && (!l["id"].is_number_integer() || l["id"].get<int>() < -1)) {
      Fail(where + ".id is not an integer >= -1");
    }
    if (l.contains("message")) Message(l["message"], where + ".message");
    if (!l.contains("physicalLocation")) return;
    const json& p = l["physicalLocation"];
    Object(p, "physicalLocation",
           {"address", "artifactLocation", "region", "contextRegion", "properties"});
    // 3.29.2: at least one of address and artifactLocation.
    if (!p.contains("artifactLocation") && !p.contains("address")) {
      Fail("physicalLocation: needs artifactLocation or address");
    }
    if (p.contains("artifactLocation")) {
      const json& a = p["artifactLocation"];
      Object(a, "artifactLocation", {"uri", "uriBaseId", "index", "description", "properties"});
      if (a.contains("uri")) {
        if (!a["uri"].is_string()) {
          Fail("artifactLocation.uri is not a string");
        } else {
          // A URI reference (RFC 3986): no spaces, controls or bytes outside ASCII unescaped.
          for (unsigned char c : a["uri"].get<std::string>()) {
            if (c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\') {
              Fail("artifactLocation.uri is not a valid URI reference");
              break;
            }
          }
        }
      }
    }
    if (p.contains("region")) {
      const json& g = p["region"];
      Object(g, "region",
             {"startLine", "startColumn", "endLine", "endColumn", "charOffset", "charLength",
              "byteOffset", "byteLength", "snippet", "message", "sourceLanguage", "properties"});
      for (const char* key : {"startLine", "startColumn", "endLine", "endColumn"}) {
        if (g.contains(key) && (!g[key].is_number_integer() || g[key].get<int>() < 1)) {
          Fail(std::string("region.") + key + " is not an integer >= 1");
        }
      }
      // 3.30.2: a text region needs startLine (or charOffset).
      if (!g.contains("startLine") && !g.contains("charOffset") && !g.contains("byteOffset")) {
        Fail("region: needs startLine, charOffset or byteOffset");
      }
    }
  }

  std::vector<std::string> errors_;
};

json Parse(const CliResult& r) {
  try {
    return json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << r.out << r.err;
    return json();
  }
}

::testing::AssertionResult ValidSarif(const json& log) {
  std::vector<std::string> errors = SarifValidator().Validate(log);
  if (errors.empty()) return ::testing::AssertionSuccess();
  std::string all;
  for (const std::string& e : errors) all += e + "\n";
  return ::testing::AssertionFailure() << all;
}

const json& OnlyRun(const json& log) { return log["runs"][0]; }

// The validator fails logs that break the structure: a check that cannot fail is no check.
TEST(SarifValidator, RejectsLogsThatBreakTheRequiredStructure) {
  CliResult r = RunParity(
      {"check", "sim/examples/gemm_empty_count_high.pipe", "--format", "sarif"});
  const json good = Parse(r);
  ASSERT_TRUE(ValidSarif(good));
  auto broken = [&](auto mutate) {
    json j = good;
    mutate(j);
    return !SarifValidator().Validate(j).empty();
  };
  EXPECT_TRUE(broken([](json& j) { j.erase("version"); }));
  EXPECT_TRUE(broken([](json& j) { j["version"] = "2.0.0"; }));
  EXPECT_TRUE(broken([](json& j) { j["runs"][0].erase("tool"); }));
  EXPECT_TRUE(broken([](json& j) { j["runs"][0]["tool"]["driver"].erase("name"); }));
  EXPECT_TRUE(broken([](json& j) { j["runs"][0]["results"][0].erase("message"); }));
  EXPECT_TRUE(broken([](json& j) { j["runs"][0]["results"][0]["level"] = "fatal"; }));
  EXPECT_TRUE(broken([](json& j) { j["runs"][0]["results"][0]["ruleIndex"] = 0; }));
  EXPECT_TRUE(broken([](json& j) { j["runs"][0]["results"][0]["severity"] = "error"; }));
  EXPECT_TRUE(broken([](json& j) {
    j["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0;
  }));
  EXPECT_TRUE(broken([](json& j) {
    j["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
        "a b.pipe";
  }));
  EXPECT_TRUE(broken([](json& j) { j["runs"][0]["invocations"][0].erase("executionSuccessful"); }));
  EXPECT_TRUE(broken([](json& j) { j["runs"][0]["tool"]["driver"]["rules"][0].erase("id"); }));
}

// ---------------------------------------------------------------- SARIF from check / explore

TEST(CliSarif, DeadlockNamesTheCulpritAndEveryBlockedAgent) {
  const std::string file = "sim/examples/gemm_empty_count_high.pipe";
  CliResult r = RunParity({"check", file, "--format", "sarif"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json log = Parse(r);
  ASSERT_TRUE(ValidSarif(log));
  const json& run = OnlyRun(log);
  EXPECT_EQ(run["tool"]["driver"]["name"], "parity");
  EXPECT_EQ(run["invocations"][0]["executionSuccessful"], true);
  EXPECT_EQ(run["invocations"][0]["exitCode"], 1);
  ASSERT_EQ(run["results"].size(), 1u);
  const json& result = run["results"][0];
  EXPECT_EQ(result["ruleId"], "P2001");
  EXPECT_EQ(result["level"], "error");
  const json& rule = run["tool"]["driver"]["rules"][result["ruleIndex"].get<int>()];
  EXPECT_EQ(rule["name"], "deadlock");
  EXPECT_THAT(rule["help"]["text"].get<std::string>(), HasSubstr("parity rules P2001"));
  const json& where = result["locations"][0]["physicalLocation"];
  EXPECT_EQ(where["artifactLocation"]["uri"], file);
  EXPECT_GT(where["region"]["startLine"].get<int>(), 0);

  // One related location per blocked agent of the diagnosis (the JSON report lists them), and
  // the culprit's first: the init count a re-run proved (verifier/culprit.h), with the change
  // in the result's properties and the JSON finding.
  CliResult j = RunParity({"check", file, "--format", "json"});
  const json doc = Parse(j);
  const size_t blocked = doc["deadlock"]["blocked"].size();
  ASSERT_GT(blocked, 1u);
  ASSERT_EQ(result["relatedLocations"].size(), blocked + 1);
  EXPECT_EQ(result["properties"]["culpritCause"], "count-too-high");
  EXPECT_EQ(result["properties"]["suggestedChange"], "set the init count of empty to 6");
  EXPECT_EQ(where["region"]["startLine"], doc["deadlock"]["culprit"]["line"]);
  EXPECT_EQ(doc["deadlock"]["culprit"]["suggested_change"], "set the init count of empty to 6");
  EXPECT_EQ(doc["deadlock"]["culprit"]["changes"], "count");
  EXPECT_EQ(doc["findings"][0]["culprit"]["suggested_change"], "set the init count of empty to 6");
  EXPECT_EQ(doc["findings"][0]["culprit"]["cause"], "count-too-high");
  std::set<std::string> agents;
  for (const json& l : result["relatedLocations"]) {
    agents.insert(l["message"]["text"].get<std::string>().substr(0, 20));
  }
  EXPECT_GT(agents.size(), 1u);

  // The behaviour before the deadlock is the result's code flow: the last 12 events by default,
  // --last N of them when asked.
  EXPECT_EQ(result["codeFlows"][0]["threadFlows"][0]["locations"].size(), 12u);
  CliResult last = RunParity({"check", file, "--format", "sarif", "--last", "5"});
  const json five = Parse(last);
  ASSERT_TRUE(ValidSarif(five));
  EXPECT_EQ(OnlyRun(five)["results"][0]["codeFlows"][0]["threadFlows"][0]["locations"].size(),
            5u);
}

TEST(CliSarif, RaceRelatesBothAgentsAndRuleMetadataCarriesTheCitation) {
  CliResult r = RunParity({"check", "sim/examples/rules/use_without_wait.pipe", "--format",
                           "sarif"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json log = Parse(r);
  ASSERT_TRUE(ValidSarif(log));
  const json& run = OnlyRun(log);
  const json* race = nullptr;
  for (const json& res : run["results"]) {
    if (res["ruleId"] == "P2005") race = &res;
  }
  ASSERT_NE(race, nullptr);
  EXPECT_EQ((*race)["locations"][0]["physicalLocation"]["region"]["startLine"], 19);  // tma.load
  ASSERT_EQ((*race)["relatedLocations"].size(), 2u);
  EXPECT_EQ((*race)["relatedLocations"][1]["physicalLocation"]["region"]["startLine"], 25);
  EXPECT_THAT((*race)["relatedLocations"][1]["message"]["text"].get<std::string>(),
              HasSubstr("consumer[0]"));
  bool cited = false;
  for (const json& rule : run["tool"]["driver"]["rules"]) {
    if (rule["id"] == "M1005") {
      cited = true;
      EXPECT_THAT(rule["properties"]["citation"].get<std::string>(), HasSubstr("PTX ISA"));
      EXPECT_EQ(rule["defaultConfiguration"]["level"], "error");
    }
    if (rule["id"] == "A1002") {
      EXPECT_EQ(rule["defaultConfiguration"]["level"], "warning");
    }
  }
  EXPECT_TRUE(cited);
}

TEST(CliSarif, CleanRunHasNoResults) {
  CliResult r = RunParity({"check", "sim/examples/gemm_tma_multicast_2x2.pipe", "--format",
                           "sarif"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json log = Parse(r);
  ASSERT_TRUE(ValidSarif(log));
  EXPECT_TRUE(OnlyRun(log)["results"].empty());
  EXPECT_EQ(OnlyRun(log)["invocations"][0]["exitCode"], 0);
}

TEST(CliSarif, ExploreCounterexampleIsACodeFlow) {
  CliResult r = RunParity({"explore", "sim/examples/explore/poll_instead_of_wait.pipe",
                           "--format", "sarif"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json log = Parse(r);
  ASSERT_TRUE(ValidSarif(log));
  const json& result = OnlyRun(log)["results"][0];
  EXPECT_EQ(result["ruleId"], "P2001");
  const json& steps = result["codeFlows"][0]["threadFlows"][0]["locations"];
  ASSERT_GT(steps.size(), 2u);
  EXPECT_THAT(steps[0]["location"]["message"]["text"].get<std::string>(), HasSubstr("init"));
  // The same account of the counterexample as the json document.
  const json& c = OnlyRun(log)["properties"]["counterexample"];
  EXPECT_GE(c["firstLength"].get<size_t>(), c["length"].get<size_t>());
  EXPECT_GT(c["length"].get<size_t>(), 0u);
}

TEST(CliSarif, BadInputIsAFailedInvocationWithTheErrorsLocation) {
  CliResult r = RunParity({"check", "no/such/file.pipe", "--format", "sarif"});
  EXPECT_EQ(r.exit_code, 2);
  const json log = Parse(r);
  ASSERT_TRUE(ValidSarif(log));
  const json& inv = OnlyRun(log)["invocations"][0];
  EXPECT_EQ(inv["executionSuccessful"], false);
  EXPECT_EQ(inv["exitCode"], 2);
  EXPECT_THAT(inv["toolExecutionNotifications"][0]["message"]["text"].get<std::string>(),
              HasSubstr("no/such/file.pipe"));
  EXPECT_TRUE(OnlyRun(log)["results"].empty());
}

TEST(CliSarif, IncompleteSearchIsAWarningNotAVerification) {
  CliResult r = RunParity({"explore", "pipelines/tma_async_gemm/gemm.pipe", "--max-states",
                           "200", "--format", "sarif"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  const json log = Parse(r);
  ASSERT_TRUE(ValidSarif(log));
  const json& inv = OnlyRun(log)["invocations"][0];
  EXPECT_EQ(inv["exitCode"], 4);
  EXPECT_EQ(inv["executionSuccessful"], true);
  ASSERT_EQ(inv["toolExecutionNotifications"].size(), 1u);
  EXPECT_EQ(inv["toolExecutionNotifications"][0]["level"], "warning");
  EXPECT_THAT(inv["toolExecutionNotifications"][0]["message"]["text"].get<std::string>(),
              HasSubstr("not verified"));
}

TEST(CliSarif, AbsolutePathsBecomeFileUris) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string path = std::string(tmp) + "/a b.pipe";  // a space: percent-encoded
  std::ifstream in("sim/examples/gemm_empty_count_high.pipe");
  std::ofstream(path) << in.rdbuf();
  CliResult r = RunParity({"check", path, "--format", "sarif"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json log = Parse(r);
  ASSERT_TRUE(ValidSarif(log));
  const std::string uri =
      OnlyRun(log)["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
  EXPECT_EQ(uri.rfind("file:///", 0), 0u) << uri;
  EXPECT_THAT(uri, HasSubstr("/a%20b.pipe"));
}

// A file under the working directory (CI runs from the repository root) is a relative URI from
// there, however the command line named it: an absolute path or one through `..` would point a
// code-scanning upload outside the repository.
TEST(CliSarif, FilesUnderTheWorkingDirectoryAreRelativeUris) {
  const std::string cwd = std::filesystem::current_path().string();
  for (const std::string& path :
       {cwd + "/sim/examples/gemm_empty_count_high.pipe",
        std::string("./sim/../sim/examples/gemm_empty_count_high.pipe"),
        std::string("sim/examples/gemm_empty_count_high.pipe")}) {
    CliResult r = RunParity({"check", path, "--format", "sarif"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const json log = Parse(r);
    ASSERT_TRUE(ValidSarif(log));
    const json& run = OnlyRun(log);
    for (const json& loc : {run["results"][0]["locations"][0],
                            run["results"][0]["relatedLocations"][0]}) {
      const json& artifact = loc["physicalLocation"]["artifactLocation"];
      EXPECT_EQ(artifact["uri"], "sim/examples/gemm_empty_count_high.pipe") << path;
      EXPECT_EQ(artifact["uriBaseId"], "%SRCROOT%") << path;
    }
    const std::string base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"];
    EXPECT_EQ(base.rfind("file:///", 0), 0u) << base;
    EXPECT_EQ(base.back(), '/') << base;
  }
}

// Code scanning refuses an upload in which several runs share a tool and automationDetails.id
// (a directory of one log per schedule, as README's workflow uploads): each log's id names the
// command and the schedule, and stays the same from one CI run to the next.
TEST(CliSarif, EachScheduleAndCommandIsItsOwnAnalysisCategory) {
  std::set<std::string> ids;
  for (const char* command : {"check", "explore"}) {
    for (const char* file : {"sim/examples/explore/poll_instead_of_wait.pipe",
                             "pipelines/single_tma_load/count1.pipe", "no/such/file.pipe"}) {
      CliResult r = RunParity({command, file, "--format", "sarif"});
      const json log = Parse(r);
      ASSERT_TRUE(ValidSarif(log)) << command << " " << file;
      const std::string id = OnlyRun(log)["automationDetails"]["id"];
      EXPECT_EQ(id, std::string("parity/") + command + "/" + file + "/");
      ids.insert(id);
      CliResult again = RunParity({command, file, "--format", "sarif"});
      EXPECT_EQ(OnlyRun(Parse(again))["automationDetails"]["id"], id);
    }
  }
  EXPECT_EQ(ids.size(), 6u);
}

// Paths are bytes: a file name that is not UTF-8 still gives valid JSON and SARIF (the bytes
// replaced in text, percent-encoded in URIs).
TEST(CliSarif, NonUtf8FileNamesStillGiveValidDocuments) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string path = std::string(tmp) + "/bad\xff\xfe.pipe";
  std::ifstream in("sim/examples/gemm_empty_count_high.pipe");
  std::ofstream(path) << in.rdbuf();
  for (const char* format : {"json", "sarif"}) {
    CliResult r = RunParity({"check", path, "--format", format});
    EXPECT_EQ(r.exit_code, 1) << format << r.err;
    const json j = Parse(r);
    ASSERT_TRUE(j.is_object()) << format;
    if (std::string(format) == "sarif") {
      ASSERT_TRUE(ValidSarif(j));
      const std::string uri =
          OnlyRun(j)["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
      EXPECT_THAT(uri, HasSubstr("bad%FF%FE.pipe"));
    } else {
      EXPECT_THAT(j["file"].get<std::string>(), HasSubstr("bad\xef\xbf\xbd\xef\xbf\xbd.pipe"));
      EXPECT_THAT(j["findings"][0]["location"]["file"].get<std::string>(),
                  HasSubstr("\xef\xbf\xbd"));
    }
  }
}

// ---------------------------------------------------------------- JSON

TEST(CliJson, CheckHasSchemaAndStructuredLocations) {
  CliResult r = RunParity({"check", "sim/examples/gemm_empty_count_high.pipe", "--format",
                           "json"});
  EXPECT_EQ(r.exit_code, 1);
  const json j = Parse(r);
  EXPECT_EQ(j["schema"], "parity.check/1");
  EXPECT_EQ(j["exit_code"], 1);
  const json& loc = j["deadlock"]["blocked"][0]["location"];
  EXPECT_EQ(loc["file"], "sim/examples/gemm_empty_count_high.pipe");
  EXPECT_GT(loc["line"].get<int>(), 0);
  EXPECT_GT(loc["column"].get<int>(), 0);
  ASSERT_FALSE(j["findings"].empty());
  EXPECT_EQ(j["findings"][0]["code"], "P2001");
  EXPECT_TRUE(j["findings"][0]["location"].is_object());
}

TEST(CliJson, ExploreReportsVerdictStatsAndCounterexample) {
  CliResult ok = RunParity({"explore", "pipelines/single_tma_load/count1.pipe", "--format",
                            "json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  json j = Parse(ok);
  EXPECT_EQ(j["schema"], "parity.explore/1");
  EXPECT_EQ(j["verdict"], "verified");
  EXPECT_EQ(j["complete"], true);
  EXPECT_GT(j["stats"]["states"].get<int>(), 1);
  EXPECT_TRUE(j["counterexample"].is_null());

  CliResult bad = RunParity({"explore", "sim/examples/explore/poll_instead_of_wait.pipe",
                             "--format", "json"});
  EXPECT_EQ(bad.exit_code, 1);
  j = Parse(bad);
  EXPECT_EQ(j["verdict"], "deadlock");
  ASSERT_FALSE(j["counterexample"]["steps"].empty());
  EXPECT_TRUE(j["counterexample"]["steps"][0]["events"][0]["location"]["line"].is_number());
  // The depth-first search's first counterexample and how the reported one came from it.
  EXPECT_EQ(j["counterexample"]["length"], j["counterexample"]["steps"].size());
  EXPECT_FALSE(j["counterexample"]["shortening"].get<std::string>().empty());
  ASSERT_TRUE(j["first_counterexample"].is_object());
  EXPECT_GE(j["first_counterexample"]["length"].get<size_t>(),
            j["counterexample"]["length"].get<size_t>());
  EXPECT_GE(j["first_counterexample"]["seconds"].get<double>(), 0.0);

  CliResult cut = RunParity({"explore", "pipelines/tma_async_gemm/gemm.pipe", "--max-states",
                             "200", "--format", "json"});
  EXPECT_EQ(cut.exit_code, 4);
  j = Parse(cut);
  EXPECT_EQ(j["verdict"], "incomplete");
  EXPECT_EQ(j["complete"], false);
  EXPECT_THAT(j["bound"].get<std::string>(), HasSubstr("max-states"));
}

TEST(CliJson, BadInputIsAJsonErrorDocument) {
  struct Case {
    std::vector<std::string> args;
    std::string command, rule;
  };
  const std::vector<Case> cases = {
      {{"check", "no/such/file.pipe", "--format", "json"}, "check", "io"},
      {{"explore", "pipelines/single_tma_load/count1.pipe", "-D", "NOPE=3", "--format", "json"},
       "explore", "param.unknown"},
      {{"check", "--format", "json", "--no-such-option"}, "check", "cli.usage"},
      {{"explore", "--format=json"}, "explore", "cli.usage"},
  };
  for (const Case& c : cases) {
    CliResult r = RunParity(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[1];
    const json j = Parse(r);
    EXPECT_EQ(j["schema"], "parity." + c.command + "/1") << r.out;
    EXPECT_EQ(j["error"]["rule"], c.rule) << r.out;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
  }
  // Where the error has a place, it is structured.
  std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/bad.pipe";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("cluster 1x1\nbarrier full[1] count 1\nrole p {\n  arrive full[0\n}\n", f);
  std::fclose(f);
  CliResult r = RunParity({"check", path, "--format", "json"});
  EXPECT_EQ(r.exit_code, 2);
  const json j = Parse(r);
  EXPECT_EQ(j["error"]["rule"], "parse");
  EXPECT_EQ(j["error"]["location"]["line"], 5);
  EXPECT_EQ(j["error"]["location"]["column"], 1);
}


// ---------------------------------------------------------------- every reporting command

std::string Tmp(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  return std::string(t ? t : "/tmp") + "/" + name;
}

std::string RecordTrace(const std::string& pipe, const std::string& policy,
                        const std::string& name) {
  const std::string path = Tmp(name);
  CliResult r = RunParity({"run", pipe, "--policy", policy, "--trace", path});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  return path;
}

TEST(CliJson, EveryReportingCommandNamesItsSchema) {
  const std::string pipe = "sim/examples/single_tma_load.pipe";
  const std::string a = RecordTrace(pipe, "eager", "schema_a.trc");
  const std::string b = RecordTrace(pipe, "lazy", "schema_b.trc");
  struct Case {
    std::string command;
    std::vector<std::string> args;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {"check", {"check", pipe}, 0},
      {"explore", {"explore", pipe}, 0},
      {"replay", {"replay", pipe, a}, 0},
      {"compare", {"compare", a, b}, 0},
      {"litmus", {"litmus", "litmus/arrive_count_exact.pipe"}, 0},
      {"rules", {"rules"}, 0},
      {"counts", {"counts", "cp-async", "--stages", "3"}, 0},
      {"tma-layout", {"tma-layout", "--dtype", "f16", "--box", "8,2"}, 0},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("--format");
    args.push_back("json");
    CliResult r = RunParity(args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.command << "\n" << r.out << r.err;
    const json j = Parse(r);
    ASSERT_TRUE(j.is_object()) << c.command;
    EXPECT_EQ(j["schema"], "parity." + c.command + "/1") << c.command;
  }
}

TEST(CliJson, EveryReportingCommandReportsBadInputAsJson) {
  const std::string garbage = Tmp("garbage.trc");
  FILE* f = std::fopen(garbage.c_str(), "w");
  std::fputs("not a trace", f);
  std::fclose(f);
  struct Case {
    std::string command;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"replay", {"replay", "sim/examples/single_tma_load.pipe", garbage}},
      {"compare", {"compare", garbage, garbage}},
      {"litmus", {"litmus"}},
      {"rules", {"rules", "X9999"}},
      {"counts", {"counts", "cp-sync"}},
      {"tma-layout", {"tma-layout", "--dtype", "f12", "--box", "8"}},
      {"gpu-run", {"gpu", "run", "sim/examples/single_tma_load.pipe", "-D", "NOPE=1"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("--format");
    args.push_back("json");
    CliResult r = RunParity(args);
    EXPECT_EQ(r.exit_code, 2) << c.command << "\n" << r.out << r.err;
    const json j = Parse(r);
    ASSERT_TRUE(j.is_object()) << c.command;
    EXPECT_EQ(j["schema"], "parity." + c.command + "/1") << c.command << r.out;
    EXPECT_TRUE(j["error"]["rule"].is_string()) << c.command << r.out;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty()) << c.command;
  }
}

// --format placed before the subcommand is a usage error reported for that subcommand: its
// value is not taken for the subcommand's name.
TEST(CliJson, FormatBeforeTheSubcommandIsAUsageErrorOfThatSubcommand) {
  CliResult r =
      RunParity({"--format", "json", "check", "sim/examples/single_tma_load.pipe"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const json j = Parse(r);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["schema"], "parity.check/1") << r.out;
  EXPECT_EQ(j["error"]["rule"], "cli.usage") << r.out;
}

// The line of the first statement of `pipe` that starts with `prefix` (after indentation).
int LineOf(const std::string& pipe, const std::string& prefix) {
  std::ifstream in(pipe);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t at = line.find_first_not_of(' ');
    if (at != std::string::npos && line.compare(at, prefix.size(), prefix) == 0) return n;
  }
  ADD_FAILURE() << prefix << " not in " << pipe;
  return -1;
}

TEST(CliJson, ReplayDivergenceNamesTheEventAndItsStatement) {
  const std::string pipe = "sim/examples/single_tma_load.pipe";
  const std::string path = RecordTrace(pipe, "lazy", "json_lazy.trc");
  auto t = trace::ReadTraceFile(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // lazy: ..., tma.issue, wait.begin, tma.deliver, phase.complete, wait.end, ...: the wait ends
  // before the bytes land.
  using trace::EventKind;
  ASSERT_EQ(t->events[5].kind, static_cast<uint8_t>(EventKind::kTmaDeliver));
  ASSERT_EQ(t->events[7].kind, static_cast<uint8_t>(EventKind::kWaitEnd));
  std::swap(t->events[5], t->events[7]);
  const std::string bad = Tmp("json_swapped.trc");
  ASSERT_TRUE(trace::WriteTraceFile(bad, *t).ok());
  CliResult r = RunParity({"replay", pipe, bad, "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = Parse(r);
  EXPECT_EQ(j["diverged"], true);
  const json& d = j["divergence"];
  EXPECT_EQ(d["event_number"], 6);
  EXPECT_EQ(d["kind"], "wait.end");
  EXPECT_FALSE(d["reason"].get<std::string>().empty());
  EXPECT_EQ(d["location"]["file"], pipe);
  EXPECT_EQ(d["location"]["line"], LineOf(pipe, "wait full[0]"));
}

TEST(CliJson, CompareListsDifferences) {
  const std::string pipe = "sim/examples/gemm_tma_multicast_2x2.pipe";
  const std::string a = RecordTrace(pipe, "eager", "cmp_a.trc");
  const std::string b = RecordTrace(pipe, "lazy", "cmp_b.trc");
  auto t = trace::ReadTraceFile(b);
  ASSERT_TRUE(t.ok());
  for (auto& e : t->events) {
    if (e.kind == static_cast<uint8_t>(trace::EventKind::kTmaDeliver)) {
      e.value = 4096;  // half a box landed
      break;
    }
  }
  const std::string c = Tmp("cmp_c.trc");
  ASSERT_TRUE(trace::WriteTraceFile(c, *t).ok());
  CliResult r = RunParity({"compare", a, c, "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = Parse(r);
  EXPECT_EQ(j["same"], false);
  ASSERT_FALSE(j["differences"].empty());
  EXPECT_THAT(j["differences"][0].get<std::string>(), HasSubstr("4096 bytes"));
  EXPECT_EQ(j["trace_b"]["policy"], "lazy");
}

}  // namespace
}  // namespace parity::testing
