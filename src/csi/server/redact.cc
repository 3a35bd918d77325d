#include "csi/server/redact.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <memory>

#include "csi/proto/csi.pb.h"

namespace ccm::csi {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

void Redact(Message* m) {
  const google::protobuf::Reflection* r = m->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(*m, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->options().GetExtension(::csi::v1::csi_secret)) {
      if (f->is_map()) {
        // Keep the keys (which secret was passed is useful), drop the values.
        for (int i = 0; i < r->FieldSize(*m, f); ++i) {
          Message* entry = r->MutableRepeatedMessage(m, f, i);
          const FieldDescriptor* value = entry->GetDescriptor()->map_value();
          entry->GetReflection()->SetString(entry, value, kRedacted);
        }
      } else if (f->type() == FieldDescriptor::TYPE_STRING && !f->is_repeated()) {
        r->SetString(m, f, kRedacted);
      } else {
        r->ClearField(m, f);
      }
      continue;
    }
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(*m, f); ++i) Redact(r->MutableRepeatedMessage(m, f, i));
    } else {
      Redact(r->MutableMessage(m, f));
    }
  }
}

}  // namespace

std::string RedactedDebugString(const Message& m) {
  std::unique_ptr<Message> copy(m.New());
  copy->CopyFrom(m);
  Redact(copy.get());
  return copy->ShortDebugString();
}

}  // namespace ccm::csi
