// The anchor of ccm_test_pch (cmake/ccm.cmake): the tests reuse its precompiled header.
