# frozen_string_literal: true

require_relative "test_helper"
require "json"
require "open3"

class Blob < String; end

# How far a sampled Ruby number can be trusted, end to end: the sampler, the profile, and the
# 95% intervals `heaprec report` prints. A known population is profiled with many seeds; the
# intervals must cover the true count and size about 95% of the time.
class AccuracyTest < HeaprecTestCase
  RUNS = 60
  OBJECTS = 4_000
  SAMPLE_EVERY = 40

  def report(profile_path, sample_index)
    out, err, status = Open3.capture3(ENV.fetch("HEAPREC_BIN"), "report", "--format", "json",
                                      "--sample-index", sample_index, profile_path)
    assert status.success?, err
    JSON.parse(out).fetch("classes").find { |c| c["class"] == "Blob" }
  end

  def test_intervals_cover_the_truth_about_95_percent_of_the_time
    covered = { "inuse_objects" => 0, "inuse_space" => 0 }
    estimates = []
    RUNS.times do |seed|
      Heaprec.start(sample_every: SAMPLE_EVERY, seed: seed + 1)
      # Sizes from 200 to 2,200 characters: the bytes estimate must hold for mixed sizes.
      blobs = Array.new(OBJECTS) { |i| Blob.new("x" * (200 + (i * 7919) % 2_000)) }
      full_gc
      file = path("accuracy-#{seed}.pb.gz")
      Heaprec.dump(file)
      Heaprec.stop
      truth = { "inuse_objects" => OBJECTS, "inuse_space" => blobs.sum { |b| ObjectSpace.memsize_of(b) } }
      truth.each do |index, value|
        row = report(file, index)
        next if row.nil? # nothing sampled at all: the interval [0, 0] misses
        covered[index] += 1 if row["value_low"] <= value && value <= row["value_high"]
        estimates << row["value"].to_f / value if index == "inuse_objects"
      end
    end
    # Coverage is Binomial(60, 0.95) if the intervals are right: mean 57, standard deviation 1.7.
    # 50 is 4 standard deviations below; the seeds are fixed, so the outcome is repeatable.
    covered.each { |index, hits| assert_operator hits, :>=, 50, "#{index}: #{hits} of #{RUNS} covered" }
    puts "coverage #{covered}" if ENV["HEAPREC_VERBOSE"]
    # Intervals far too wide would cover everything: the estimates must also scatter as sampling
    # predicts. Relative standard deviation of a count estimate: sqrt((N - 1) / n) ≈ 0.0987 here.
    mean = estimates.sum / estimates.size
    sd = Math.sqrt(estimates.sum { |e| (e - mean)**2 } / (estimates.size - 1))
    assert_in_delta 1.0, mean, 4 * 0.0987 / Math.sqrt(RUNS), "the estimator is unbiased"
    puts format("mean %.4f sd %.4f", mean, sd) if ENV["HEAPREC_VERBOSE"]
    assert_operator sd, :>, 0.0987 * 0.6
    assert_operator sd, :<, 0.0987 * 1.4
  end
end
