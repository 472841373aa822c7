// SPDX-License-Identifier: MIT
/*
 * An empty program. emu/CMakeLists.txt links one library of the daemon into
 * it whole, with only the libraries that library may depend on, so that a
 * call across a forbidden arrow fails the build (see that file).
 */
int main(void)
{
	return 0;
}
