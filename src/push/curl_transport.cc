#include <curl/curl.h>
#include <time.h>

#include <algorithm>
#include <mutex>

#include "push/transport.h"

namespace heaprec::push {
namespace {

constexpr std::size_t kMaxReplyBytes = 4096;  // of the server's reply to a POST, for the message

// What is kept of a reply: at most `limit` bytes; `cut` when there were more.
struct Reply {
  std::string text;
  std::size_t limit;
  bool cut = false;
};

std::size_t KeepReply(char* data, std::size_t size, std::size_t count, void* user) {
  Reply* reply = static_cast<Reply*>(user);
  std::size_t bytes = size * count;
  if (reply->text.size() < reply->limit) {
    reply->text.append(data, std::min(bytes, reply->limit - reply->text.size()));
  }
  if (bytes > 0 && reply->text.size() == reply->limit) reply->cut = true;
  return bytes;
}

// The reply as one short line: its first line, at most 200 characters.
std::string OneLine(std::string text) {
  std::size_t end = text.find_first_of("\r\n");
  if (end != std::string::npos) text.resize(end);
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return text;
}

}  // namespace

double MonotonicNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

CurlTransport::CurlTransport(CurlTimeouts timeouts) : timeouts_(timeouts) {
  static std::once_flag initialized;
  std::call_once(initialized, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  handle_ = curl_easy_init();
}

CurlTransport::~CurlTransport() {
  if (handle_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(handle_));
}

int CurlTransport::Progress(void* self, long long, long long, long long, long long) {
  return MonotonicNow() >= static_cast<CurlTransport*>(self)->abort_at_.load() ? 1 : 0;
}

// The options every request shares, the request itself, and its outcome: the status, or why no
// answer came in `detail`.
Response CurlTransport::Perform(const std::string& url, void* reply) {
  Response response;
  CURL* curl = static_cast<CURL*>(handle_);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "heaprec/" HEAPREC_VERSION);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for DNS timeouts: heaprec has threads
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(timeouts_.connect_seconds * 1000));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeouts_.request_seconds * 1000));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, KeepReply);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, reply);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, Progress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, this);
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  CURLcode code = curl_easy_perform(curl);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);  // `error` ends with this call
  if (code != CURLE_OK) {
    response.detail = code == CURLE_ABORTED_BY_CALLBACK ? "out of time"
                      : error[0] != '\0'                ? error
                                                        : curl_easy_strerror(code);
    return response;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

// Why no request can be made now, "" when one can.
std::string CurlTransport::Unavailable() const {
  if (handle_ == nullptr) return "cannot initialize libcurl";
  if (MonotonicNow() >= abort_at_.load()) return "out of time";
  return "";
}

Response CurlTransport::Post(const std::string& url, const std::vector<std::string>& headers,
                             const std::string& body) {
  Response response;
  if (response.detail = Unavailable(); !response.detail.empty()) return response;
  CURL* curl = static_cast<CURL*>(handle_);
  curl_easy_reset(curl);
  // Pyroscope reads a format=pprof body as the profile itself (gzip or not); "Expect:" turns off
  // curl's 100-continue round trip for large bodies.
  curl_slist* list = curl_slist_append(nullptr, "Content-Type: application/octet-stream");
  list = curl_slist_append(list, "Expect:");
  for (const std::string& header : headers) list = curl_slist_append(list, header.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  Reply reply{"", kMaxReplyBytes};
  response = Perform(url, &reply);
  curl_slist_free_all(list);
  if (response.status != 0) response.detail = OneLine(reply.text);
  return response;
}

Response CurlTransport::Get(const std::string& url, std::size_t limit, std::string* body) {
  Response response;
  if (response.detail = Unavailable(); !response.detail.empty()) return response;
  curl_easy_reset(static_cast<CURL*>(handle_));
  Reply reply{"", limit};
  response = Perform(url, &reply);
  if (response.status == 0) return response;
  if (reply.cut) {
    response.status = 0;
    response.detail = "the answer is larger than " + std::to_string(limit) + " bytes";
    return response;
  }
  response.detail = OneLine(reply.text);
  *body = std::move(reply.text);
  return response;
}

}  // namespace heaprec::push
