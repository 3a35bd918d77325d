#pragma once
// Test helper: a SOAP response body wrapped in the envelope vCenter sends.

#include <string>

namespace ccm::vsphere {

inline std::string TestEnvelope(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>)" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

}  // namespace ccm::vsphere
