# frozen_string_literal: true

require "zlib"

# A small decoder of pprof profiles (profile.proto, gzip-compressed) for the Ruby tests: enough of
# protobuf's wire format to read what heaprec writes, independent of heaprec's own C++ reader, so a
# bug in the writer cannot hide behind the same bug in the reader.
module PprofDecoder
  Profile = Struct.new(:sample_types, :samples, :locations, :functions, :period_type, :period,
                       :comments, :strings, keyword_init: true)
  Sample = Struct.new(:location_ids, :values, :labels, keyword_init: true)
  Label = Struct.new(:key, :str, :num, :unit, keyword_init: true)
  Line = Struct.new(:function_id, :line, keyword_init: true)
  Location = Struct.new(:id, :mapping_id, :address, :lines, keyword_init: true)
  Function = Struct.new(:id, :name, :system_name, :filename, keyword_init: true)
  # A stack frame with names resolved: what the tests assert on.
  Frame = Struct.new(:function, :file, :line)

  module_function

  def read_file(path)
    decode(Zlib.gunzip(File.binread(path)))
  end

  # Yields [field_number, wire_type, value] for each field of a message.
  def each_field(bytes)
    pos = 0
    while pos < bytes.bytesize
      key, pos = varint(bytes, pos)
      field = key >> 3
      case key & 7
      when 0 then value, pos = varint(bytes, pos)
      when 2
        length, pos = varint(bytes, pos)
        value = bytes.byteslice(pos, length)
        pos += length
      when 1 then value = bytes.byteslice(pos, 8).unpack1("Q<"); pos += 8
      when 5 then value = bytes.byteslice(pos, 4).unpack1("L<"); pos += 4
      else raise "unsupported wire type #{key & 7}"
      end
      yield field, key & 7, value
    end
  end

  def varint(bytes, pos)
    result = 0
    shift = 0
    loop do
      byte = bytes.getbyte(pos)
      raise "truncated varint" if byte.nil?
      pos += 1
      result |= (byte & 0x7f) << shift
      return [result, pos] if byte < 0x80
      shift += 7
    end
  end

  # int64 values are encoded as two's complement varints.
  def signed(value) = value >= (1 << 63) ? value - (1 << 64) : value

  # A repeated scalar field, packed (wire type 2) or not.
  def append_repeated(list, wire_type, value)
    if wire_type == 2
      pos = 0
      while pos < value.bytesize
        v, pos = varint(value, pos)
        list << signed(v)
      end
    else
      list << signed(value)
    end
  end

  def decode(bytes)
    strings = []
    raw = { sample_types: [], samples: [], locations: [], functions: [], comments: [] }
    period_type = nil
    period = 0
    each_field(bytes) do |field, wire_type, value|
      case field
      when 1 then raw[:sample_types] << value_type(value)
      when 2 then raw[:samples] << value
      when 4 then raw[:locations] << value
      when 5 then raw[:functions] << value
      when 6 then strings << value.dup.force_encoding(Encoding::UTF_8)
      when 11 then period_type = value_type(value)
      when 12 then period = signed(value)
      when 13 then append_repeated(raw[:comments], wire_type, value)
      end
    end
    s = ->(index) { strings.fetch(index) }
    functions = raw[:functions].map { |m| function(m, s) }.to_h { |f| [f.id, f] }
    locations = raw[:locations].map { |m| location(m) }.to_h { |l| [l.id, l] }
    Profile.new(
      sample_types: raw[:sample_types].map { |t, u| [s[t], s[u]] },
      samples: raw[:samples].map { |m| sample(m, s) },
      locations: locations, functions: functions,
      period_type: period_type && period_type.map { |i| s[i] }, period: period,
      comments: raw[:comments].map { |i| s[i] }, strings: strings
    )
  end

  def value_type(bytes)
    type = unit = 0
    each_field(bytes) do |field, _, value|
      type = value if field == 1
      unit = value if field == 2
    end
    [type, unit]
  end

  def sample(bytes, s)
    location_ids = []
    values = []
    labels = []
    each_field(bytes) do |field, wire_type, value|
      case field
      when 1 then append_repeated(location_ids, wire_type, value)
      when 2 then append_repeated(values, wire_type, value)
      when 3 then labels << label(value, s)
      end
    end
    Sample.new(location_ids: location_ids, values: values, labels: labels)
  end

  def label(bytes, s)
    fields = {}
    each_field(bytes) { |field, _, value| fields[field] = value }
    Label.new(key: s[fields.fetch(1, 0)], str: fields.key?(2) ? s[fields[2]] : nil,
              num: fields.key?(3) ? signed(fields[3]) : nil,
              unit: fields.key?(4) ? s[fields[4]] : nil)
  end

  def location(bytes)
    fields = { 1 => 0, 2 => 0, 3 => 0 }
    lines = []
    each_field(bytes) do |field, _, value|
      if field == 4
        line = {}
        each_field(value) { |f, _, v| line[f] = v }
        lines << Line.new(function_id: line.fetch(1, 0), line: signed(line.fetch(2, 0)))
      else
        fields[field] = value
      end
    end
    Location.new(id: fields[1], mapping_id: fields[2], address: fields[3], lines: lines)
  end

  def function(bytes, s)
    fields = Hash.new(0)
    each_field(bytes) { |field, _, value| fields[field] = value }
    Function.new(id: fields[1], name: s[fields[2]], system_name: s[fields[3]],
                 filename: s[fields[4]])
  end
end

# Convenience queries over a decoded profile.
class DecodedProfile
  attr_reader :raw

  def initialize(path)
    @raw = PprofDecoder.read_file(path)
  end

  def value_index(type) = @raw.sample_types.index { |t, _| t == type } || raise("no #{type}")

  def label(sample, key) = sample.labels.find { |l| l.key == key }

  # The Ruby stack of a sample, leaf first, as Frames: its locations without a mapping (a native
  # byte sample's native frames, leaf-most, have one, and a name from their file until a
  # symbolizer gives them their functions').
  def frames(sample)
    sample.location_ids.flat_map do |id|
      location = @raw.locations.fetch(id)
      next [] unless location.mapping_id.zero?

      location.lines.map do |line|
        f = @raw.functions.fetch(line.function_id)
        PprofDecoder::Frame.new(f.name, f.filename, line.line)
      end
    end
  end

  # The live samples of a class (inuse values; each has a gc_age label).
  def samples_of_class(name)
    inuse = value_index("inuse_objects")
    @raw.samples.select { |s| s.values[inuse] != 0 && label(s, "class")&.str == name }
  end

  # The allocation history's samples of a class (alloc_objects only: no inuse values, no size).
  def alloc_samples_of_class(name)
    alloc = value_index("alloc_objects")
    @raw.samples.select { |s| s.values[alloc] != 0 && label(s, "class")&.str == name }
  end

  def sum(samples, type) = samples.sum { |s| s.values[value_index(type)] }

  # Estimated live objects and bytes of one class.
  def count_of(class_name) = sum(samples_of_class(class_name), "inuse_objects")
  def bytes_of(class_name) = sum(samples_of_class(class_name), "inuse_space")

  # The values of the comment field NAME=VALUE ("pid=123", "reason=exit") in every comment, in
  # order: a comment holds several, separated by spaces, as native profiles write them and
  # `heaprec leaks` reads them.
  def comment_values(name)
    prefix = "#{name}="
    @raw.comments.flat_map(&:split).filter_map { |f| f.delete_prefix(prefix) if f.start_with?(prefix) }
  end

  # The value of the one NAME=VALUE field; raises unless there is exactly one.
  def comment_value(name)
    values = comment_values(name)
    raise "#{values.size} #{name}= fields in #{@raw.comments.inspect}" unless values.size == 1

    values.first
  end

  # The process that wrote the profile, and why (exit, interval, api).
  def pid = Integer(comment_value("pid"), 10)
  def reason = comment_value("reason")
end
